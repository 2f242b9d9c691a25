"""Simulated history: kline windows for many intervals, the 24h ticker, funding, speed."""

from datetime import UTC, datetime
from itertools import pairwise

import pytest

from papertrade.market import simpath
from papertrade.market.feed import INTERVALS_MS, UnknownSymbol
from papertrade.market.sim import SimFeed
from papertrade.trading.values import Kline

NOW = 1_780_000_012_345
DAY = 86_400_000
HOUR = 3_600_000
EIGHT_HOURS = 8 * HOUR


@pytest.fixture(scope="module")
def feed() -> SimFeed:
    return SimFeed(seed=42, clock=lambda: NOW, symbols=["BTCUSDT", "DOGEUSDT"])


def merged(rows: list[Kline]) -> tuple[object, ...]:
    return (
        rows[0].open,
        max(r.high for r in rows),
        min(r.low for r in rows),
        rows[-1].close,
        sum(r.volume for r in rows),
    )


@pytest.mark.parametrize("interval", ["1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "8h", "1d"])
async def test_newest_window_for_each_interval(feed: SimFeed, interval: str) -> None:
    rows = await feed.klines("BTCUSDT", interval, limit=40)
    step = INTERVALS_MS[interval]
    assert len(rows) == 40
    assert all(r.open_time % step == 0 and r.close_time == r.open_time + step - 1 for r in rows)
    assert all(b.open_time == a.close_time + 1 for a, b in pairwise(rows))
    assert rows[-1].open_time <= NOW <= rows[-1].close_time  # the candle in progress


async def test_start_end_and_limit(feed: SimFeed) -> None:
    hour = (NOW - 10 * HOUR) // HOUR * HOUR
    rows = await feed.klines("BTCUSDT", "1h", start_ms=hour + 1, limit=3)
    assert [r.open_time for r in rows] == [hour + HOUR * k for k in (1, 2, 3)]  # first after start
    end = NOW - 5 * HOUR
    rows = await feed.klines("BTCUSDT", "1h", end_ms=end, limit=4)
    assert rows[-1].open_time <= end <= rows[-1].close_time and len(rows) == 4
    both = await feed.klines(
        "BTCUSDT", "15m", start_ms=NOW - 2 * HOUR, end_ms=NOW - HOUR, limit=1500
    )
    assert len(both) == 4 and both[-1].open_time <= NOW - HOUR < both[-1].close_time
    assert await feed.klines("BTCUSDT", "1m", start_ms=NOW + 60_000) == []
    with pytest.raises(ValueError, match="limit"):
        await feed.klines("BTCUSDT", "1m", limit=1501)
    with pytest.raises(ValueError, match="interval"):
        await feed.klines("BTCUSDT", "7m")
    with pytest.raises(UnknownSymbol):
        await feed.klines("NOPEUSDT", "1m")


async def test_history_reaches_back_more_than_thirty_days(feed: SimFeed) -> None:
    start = (NOW - 45 * DAY) // HOUR * HOUR
    rows = await feed.klines("DOGEUSDT", "1h", start_ms=start, limit=1500)
    assert rows[0].open_time == start and len(rows) == 45 * 24 + 1  # + the hour in progress
    daily = await feed.klines("DOGEUSDT", "1d", limit=1500)
    assert len(daily) >= 30 and daily[0].open_time <= NOW - 30 * DAY


async def test_coarse_candles_are_made_of_fine_ones(feed: SimFeed) -> None:
    start = NOW - 6 * HOUR - (NOW % HOUR)
    ones = await feed.klines("BTCUSDT", "1m", start_ms=start, limit=360)
    fives = await feed.klines("BTCUSDT", "5m", start_ms=start, limit=72)
    hours = await feed.klines("BTCUSDT", "1h", start_ms=start, limit=6)
    assert [merged(ones[k * 5 : k * 5 + 5]) for k in range(72)] == [merged([f]) for f in fives]
    assert [merged(ones[k * 60 : k * 60 + 60]) for k in range(6)] == [merged([h]) for h in hours]
    day = (await feed.klines("BTCUSDT", "1d", end_ms=NOW - DAY, limit=1))[0]
    day_hours = await feed.klines("BTCUSDT", "1h", start_ms=day.open_time, limit=24)
    assert merged(day_hours) == merged([day])


async def test_weekly_and_monthly_candles(feed: SimFeed) -> None:
    weeks = await feed.klines("BTCUSDT", "1w", limit=5)
    assert len(weeks) == 5
    assert all(datetime.fromtimestamp(w.open_time / 1000, UTC).weekday() == 0 for w in weeks)
    months = await feed.klines("BTCUSDT", "1M", limit=12)
    assert 2 <= len(months) <= 3  # 90 days of history
    assert all(datetime.fromtimestamp(m.open_time / 1000, UTC).day == 1 for m in months)


async def test_ticker_24h_matches_the_minute_candles(feed: SimFeed) -> None:
    ticker = await feed.ticker_24h("BTCUSDT")
    rows = await feed.klines("BTCUSDT", "1m", start_ms=ticker.open_time, limit=1500)
    assert rows[0].open_time == ticker.open_time and ticker.open_time > NOW - DAY - 60_000
    assert ticker.close_time == NOW
    assert (ticker.open_price, ticker.high_price, ticker.low_price) == merged(rows)[:3]
    assert ticker.last_price == feed.price_at("BTCUSDT", NOW)
    assert ticker.volume == sum(r.volume for r in rows)
    assert ticker.extra["priceChange"] == str(ticker.last_price - ticker.open_price)


async def test_funding_history(feed: SimFeed) -> None:
    recent = await feed.funding_history("BTCUSDT", None, None, 100)
    assert len(recent) == 100
    assert all(r.funding_time % EIGHT_HOURS == 0 for r in recent)
    assert all(b.funding_time - a.funding_time == EIGHT_HOURS for a, b in pairwise(recent))
    assert recent[-1].funding_time <= NOW < recent[-1].funding_time + EIGHT_HOURS
    assert len({r.funding_rate for r in recent}) > 10  # it varies
    for record in recent[-5:]:
        # The rate shown before settlement is the rate that settles; the mark is the path's.
        assert feed.quote_at("BTCUSDT", record.funding_time - 1).funding_rate == record.funding_rate
        assert record.mark_price == feed.quote_at("BTCUSDT", record.funding_time).mark_price
    start = NOW - 10 * DAY + 1
    window = await feed.funding_history("BTCUSDT", start, NOW - 5 * DAY, 1000)
    assert window[0].funding_time >= start and window[-1].funding_time <= NOW - 5 * DAY
    assert len(window) == 15
    assert (await feed.funding_history("BTCUSDT", start, None, 2)) == window[:2]
    with pytest.raises(ValueError, match="limit"):
        await feed.funding_history("BTCUSDT", None, None, 1001)


def _days_computed() -> int:
    """Days of minute data computed so far in this process (each is computed once, then shared)."""
    return simpath._shared_day.cache_info().misses


def test_1500_minute_candles_compute_only_the_days_they_cover() -> None:
    """What keeps a chart's first request fast (timed in bench/, not here): 1,500 minutes span at
    most two days, and only those days' minute data are computed, not the history before."""
    cold = SimFeed(seed=97, symbols=["ETHUSDT"], clock=lambda: NOW)  # a seed nothing else uses
    before = _days_computed()
    rows = cold.kline_list("ETHUSDT", "1m", limit=1500)
    assert len(rows) == 1500
    assert [b.open_time - a.open_time for a, b in pairwise(rows)] == [60_000] * 1499
    assert _days_computed() - before == len({r.open_time // DAY for r in rows}) <= 2


def test_daily_candles_are_cached_after_the_first_request() -> None:
    feed = SimFeed(seed=5, symbols=["SOLUSDT"], history_days=40, clock=lambda: NOW)
    first = feed.kline_list("SOLUSDT", "1d", limit=1500)
    computed = _days_computed()
    again = feed.kline_list("SOLUSDT", "1d", limit=1500)
    assert again == first and len(first) == 40 + 1
    assert _days_computed() == computed  # nothing computed again
