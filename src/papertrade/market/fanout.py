"""Pieces every feed shares: delivering quotes to handlers and the shape of status()."""

import asyncio
import logging
from collections.abc import Iterable
from decimal import Decimal

from papertrade.market.feed import TickHandler
from papertrade.trading.values import Quote

logger = logging.getLogger(__name__)


class TickFanout:
    """Handlers registered with on_tick, awaited in order, one quote at a time per feed."""

    def __init__(self) -> None:
        self._handlers: list[TickHandler] = []
        # One lock per feed: the live loop and test hooks never interleave their deliveries.
        self._lock = asyncio.Lock()
        self._owner: asyncio.Task[object] | None = None

    def add(self, handler: TickHandler) -> None:
        """Register a handler; it sees every quote published after this call."""
        self._handlers.append(handler)

    async def publish(self, quotes: Iterable[Quote]) -> None:
        """Await every handler for every quote; a failing handler is logged, not fatal."""
        if self._owner is not None and self._owner is asyncio.current_task():
            # A handler publishing (e.g. calling SimFeed.set_price) must not wait on itself.
            await self._deliver(quotes)
            return
        async with self._lock:
            self._owner = asyncio.current_task()
            try:
                await self._deliver(quotes)
            finally:
                self._owner = None

    async def _deliver(self, quotes: Iterable[Quote]) -> None:
        for quote in quotes:
            for handler in self._handlers:
                try:
                    await handler(quote)
                except Exception:
                    # One broken consumer must not stop prices reaching the others.
                    logger.exception("tick handler %r failed on %s", handler, quote.symbol)


def feed_status(
    source: str,
    *,
    simulated: bool,
    connected: bool,
    last_update: int | None,
    stale: bool,
    detail: str,
    **extra: object,
) -> dict[str, object]:
    """The status() dict every feed returns (extra keys are feed specific)."""
    return {
        "source": source,
        "simulated": simulated,
        "connected": connected,
        "last_update": last_update,
        "stale": stale,
        "detail": detail,
        **extra,
    }


def ticker_extras(
    open_price: Decimal, last: Decimal, volume: Decimal, quote_volume: Decimal, tick: Decimal
) -> dict[str, str]:
    """Binance's derived 24h ticker fields, as decimal strings."""
    change = last - open_price
    percent = (change * 100 / open_price).quantize(Decimal("0.001")) if open_price else Decimal(0)
    average = (quote_volume / volume).quantize(tick) if volume else last
    return {
        "priceChange": str(change),
        "priceChangePercent": str(percent),
        "weightedAvgPrice": str(average),
    }
