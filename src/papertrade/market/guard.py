"""The order path's guard: never fill on a price that is unknown or too old."""

from papertrade.market.feed import MarketFeed, StaleMarket, UnknownSymbol
from papertrade.trading.values import Quote


def fresh_quote(feed: MarketFeed, symbol: str, max_age_ms: int, now_ms: int) -> Quote:
    """The latest quote of `symbol` if at most `max_age_ms` old at `now_ms`.

    Raises UnknownSymbol when the feed does not list the symbol and StaleMarket when there is no
    quote yet or it is older than the limit.
    """
    if symbol not in feed.instruments():
        raise UnknownSymbol(symbol)
    quote = feed.quote(symbol)
    if quote is None:
        raise StaleMarket(f"no price for {symbol} yet")
    age = now_ms - quote.time
    if age > max_age_ms:
        raise StaleMarket(f"the {symbol} price is {age} ms old (limit {max_age_ms} ms)")
    return quote
