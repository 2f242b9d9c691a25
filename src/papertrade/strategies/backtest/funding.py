"""The funding a backtest charges: every settlement inside its period, however long
(docs/strategies.md)."""

from papertrade.market.feed import MarketFeed
from papertrade.trading.values import FundingRecord

PAGE = 1000  # the most funding events the exchange (and every feed) answers at once


async def in_period(
    feed: MarketFeed, symbol: str, start_ms: int, end_ms: int
) -> list[FundingRecord]:
    """Every settled funding event of `symbol` with start_ms <= funding time < end_ms (the
    period's end is exclusive, as its candles' is), oldest first, read page after page: one
    request holds at most 1,000 events, about 333 days at one every 8 hours."""
    records: list[FundingRecord] = []
    cursor = start_ms
    while cursor < end_ms:
        # The feeds' end is inclusive (Binance's endTime): ask up to the last millisecond in.
        page = await feed.funding_history(symbol, cursor, end_ms - 1, PAGE)
        inside = [r for r in page if cursor <= r.funding_time < end_ms]
        records.extend(sorted(inside, key=lambda r: r.funding_time))
        if len(page) < PAGE or not inside:
            break
        cursor = max(r.funding_time for r in inside) + 1
    return records
