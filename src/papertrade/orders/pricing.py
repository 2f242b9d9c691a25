"""Instruments and fresh marks for the order path (no fills on stale prices)."""

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
