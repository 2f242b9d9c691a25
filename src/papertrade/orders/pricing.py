"""Instruments and fresh marks for the order path (no fills on stale prices)."""

from dataclasses import dataclass

from papertrade.context import AppContext
from papertrade.kit.time import now_ms
from papertrade.market import guard
from papertrade.market.feed import MarketFeed, StaleMarket, UnknownSymbol
from papertrade.orders.errors import InvalidSymbol, MarketDataStale, MarketUnavailable
from papertrade.trading.values import Instrument, Quote


def require_feed(feed: MarketFeed | None) -> MarketFeed:
    if feed is None:
        raise MarketUnavailable("The market feed is not running.")
    return feed


def instrument_of(feed: MarketFeed | None, symbol: str) -> Instrument:
    """The instrument of a symbol, or a clear invalid_symbol error."""
    instrument = require_feed(feed).instruments().get(symbol)
    if instrument is None:
        shown = symbol if len(symbol) <= 30 else symbol[:30] + "…"
        raise InvalidSymbol(f"Unknown symbol {shown!r}; see GET /v1/market/symbols.")
    return instrument


def fresh_quote(feed: MarketFeed | None, symbol: str, max_age_ms: int) -> Quote:
    """The latest quote, refused when it is older than `max_age_ms`."""
    try:
        return guard.fresh_quote(require_feed(feed), symbol, max_age_ms, now_ms())
    except UnknownSymbol as exc:
        raise InvalidSymbol(f"Unknown symbol {symbol[:30]!r}; see GET /v1/market/symbols.") from exc
    except StaleMarket as exc:
        raise MarketDataStale(
            f"No fresh {symbol} price ({exc}); orders are not filled on stale prices. "
            "Retry when the market feed is back (GET /v1/market/status)."
        ) from exc


@dataclass(frozen=True, slots=True)
class Venue:
    """What placing and filling orders needs from the running process: the market feed (prices
    and instruments), how old a price may be to fill on, and the leverage of a symbol nobody set.
    Surfaces and the engine hand it to the order services."""

    market: MarketFeed | None
    stale_after_ms: int
    default_leverage: int
    # Whether portfolios over their owner's tier are read-only (docs/tiers.md).
    tiers_enforced: bool = False

    @classmethod
    def of(cls, ctx: AppContext) -> "Venue":
        """The venue of the running process (its market attaches at start)."""
        settings = ctx.settings
        return cls(
            ctx.market, settings.stale_after_ms, settings.default_leverage, settings.tiers_enforced
        )

    def instrument(self, symbol: str) -> Instrument:
        return instrument_of(self.market, symbol)

    def quote(self, symbol: str) -> Quote:
        """A quote fresh enough to fill on."""
        return fresh_quote(self.market, symbol, self.stale_after_ms)
