"""The one interface every market data source implements."""

from collections.abc import Awaitable, Callable
from typing import Protocol

from papertrade.trading.values import FundingRecord, Instrument, Kline, Quote, Ticker24h

TickHandler = Callable[[Quote], Awaitable[None]]

INTERVALS_MS: dict[str, int] = {
    "1m": 60_000,
    "3m": 180_000,
    "5m": 300_000,
    "15m": 900_000,
    "30m": 1_800_000,
    "1h": 3_600_000,
    "2h": 7_200_000,
    "4h": 14_400_000,
    "6h": 21_600_000,
    "8h": 28_800_000,
    "12h": 43_200_000,
    "1d": 86_400_000,
    "3d": 259_200_000,
    "1w": 604_800_000,
    "1M": 2_592_000_000,  # 30 days; only used for stepping, Binance aligns to months
}


class StaleMarket(Exception):
    """Raised when the latest price is older than the configured limit: no fills on it."""


class UnknownSymbol(Exception):
    """Raised for a symbol the feed does not list."""


class MarketFeed(Protocol):
    """A source of instruments, live quotes and price history.

    `start()` loads instruments and begins streaming; every new quote is passed to each handler
    registered with `on_tick` (awaited in order, one quote at a time per feed).
    """

    name: str  # "binance" | "sim" | "replay"

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def on_tick(self, handler: TickHandler) -> None: ...

    def instruments(self) -> dict[str, Instrument]: ...

    def quote(self, symbol: str) -> Quote | None: ...

    def quotes(self) -> dict[str, Quote]: ...

    async def klines(
        self,
        symbol: str,
        interval: str,
        start_ms: int | None = None,
        end_ms: int | None = None,
        limit: int = 500,
    ) -> list[Kline]: ...

    async def ticker_24h(self, symbol: str) -> Ticker24h: ...

    async def funding_history(
        self, symbol: str, start_ms: int | None, end_ms: int | None, limit: int
    ) -> list[FundingRecord]: ...

    def status(self) -> dict[str, object]:
        """{"source", "connected", "simulated", "last_update" (ms), "stale", "detail"}."""
        ...
