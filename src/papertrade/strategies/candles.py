"""Closed candles for a backtest: from the local cache, the rest fetched from the market feed
(Binance klines, or the sim/replay feed's history) and cached for the next run."""

from collections.abc import Awaitable, Callable
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from papertrade.context import AppContext
from papertrade.kit.time import now_ms
from papertrade.market.feed import INTERVALS_MS
from papertrade.models import CandleCache
from papertrade.trading.values import Kline

PAGE = 1500  # the most klines Binance answers in one request
MAX_BARS = 1_100_000
ROWS_PER_INSERT = 3000  # 9 parameters a row: under PostgreSQL's 32,767 per statement
Progress = Callable[[float, str], Awaitable[None]]


def expected_opens(timeframe: str, start_ms: int, end_ms: int, now: int) -> range:
    """Open times of the closed bars with start ≤ open < end (a bar still open is left out)."""
    step = INTERVALS_MS[timeframe]
    first = -(-start_ms // step) * step
    last_closed_open = (now // step) * step - step
    return range(first, min(end_ms, last_closed_open + 1), step)


async def load(
    ctx: AppContext, symbol: str, timeframe: str, start_ms: int, end_ms: int, progress: Progress
) -> list[Kline]:
    feed = ctx.market
    assert feed is not None  # the job engine starts after the market feed
    opens = expected_opens(timeframe, start_ms, end_ms, now_ms())
    if not opens:
        return []
    step = opens.step
    async with ctx.db.reader() as session:
        rows = (
            await session.scalars(
                select(CandleCache)
                .where(
                    CandleCache.source == feed.name,
                    CandleCache.symbol == symbol,
                    CandleCache.timeframe == timeframe,
                    CandleCache.open_time >= opens.start,
                    CandleCache.open_time < opens.stop,
                )
                .order_by(CandleCache.open_time)
            )
        ).all()
    cached = {r.open_time: _kline(r, step) for r in rows}
    missing = [t for t in opens if t not in cached]
    fetched: list[Kline] = []
    cursor = 0
    while cursor < len(missing):
        page_start = missing[cursor]
        page = await feed.klines(symbol, timeframe, page_start, opens.stop - 1, PAGE)
        page = [k for k in page if k.open_time in opens and k.open_time not in cached]
        if not page:
            break  # the feed has no more history in the range
        fetched.extend(page)
        for k in page:
            cached[k.open_time] = k
        while cursor < len(missing) and missing[cursor] <= page[-1].open_time:
            cursor += 1
        await progress(0.4 * cursor / len(missing), f"{len(cached)} of {len(opens)} candles")
    if fetched:
        await _store(ctx, feed.name, symbol, timeframe, fetched)
    return [cached[t] for t in sorted(cached)]


def _kline(row: CandleCache, step: int) -> Kline:
    return Kline(
        open_time=row.open_time,
        open=row.open,
        high=row.high,
        low=row.low,
        close=row.close,
        volume=row.volume,
        close_time=row.open_time + step - 1,
    )


async def _store(
    ctx: AppContext, source: str, symbol: str, timeframe: str, klines: list[Kline]
) -> None:
    """Cache fetched candles; a candle another run cached meanwhile is left as it is."""
    insert = sqlite_insert if ctx.db.is_sqlite else pg_insert
    for index in range(0, len(klines), ROWS_PER_INSERT):
        values = [
            {
                "source": source,
                "symbol": symbol,
                "timeframe": timeframe,
                "open_time": k.open_time,
                "open": _exact(k.open),
                "high": _exact(k.high),
                "low": _exact(k.low),
                "close": _exact(k.close),
                "volume": _exact(k.volume),
            }
            for k in klines[index : index + ROWS_PER_INSERT]
        ]
        async with ctx.db.unit_of_work() as session:
            await session.execute(insert(CandleCache).values(values).on_conflict_do_nothing())


def _exact(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.00000001"))
