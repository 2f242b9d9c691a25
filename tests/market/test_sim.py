"""The simulated feed: determinism, live ticks consistent with candles, the set_price hook."""

import asyncio
from decimal import Decimal
from itertools import pairwise

import pytest

from papertrade.market.feed import UnknownSymbol
from papertrade.market.intervals import candle_open
from papertrade.market.sim import SimFeed
from papertrade.trading.values import Kline, Quote
from tests.market.support import eventually

NOW = 1_780_000_012_345  # a fixed "now" (2026-05-28 20:26:52 UTC) for history tests


def frozen(t: int = NOW) -> SimFeed:
    return SimFeed(seed=42, clock=lambda: t, symbols=["BTCUSDT", "ETHUSDT", "1000PEPEUSDT"])


def kline_at(feed: SimFeed, symbol: str, t: int) -> Kline:
    (row,) = feed.kline_list(symbol, "1m", start_ms=candle_open("1m", t), limit=1)
    return row


def test_same_seed_same_history_other_seed_other_history() -> None:
    a, b = frozen(), frozen()
    other = SimFeed(seed=43, clock=lambda: NOW, symbols=["BTCUSDT"])
    assert a.kline_list("BTCUSDT", "1m", limit=1500) == b.kline_list("BTCUSDT", "1m", limit=1500)
    assert a.kline_list("BTCUSDT", "1d", limit=60) == b.kline_list("BTCUSDT", "1d", limit=60)
    assert a.kline_list("BTCUSDT", "1h", limit=48) != other.kline_list("BTCUSDT", "1h", limit=48)
    assert a.kline_list("BTCUSDT", "1h", limit=5) != a.kline_list("ETHUSDT", "1h", limit=5)


def test_history_does_not_depend_on_when_the_feed_started() -> None:
    early, later = frozen(), frozen(NOW + 3 * 86_400_000)
    window = {"start_ms": NOW - 6 * 3_600_000, "end_ms": NOW - 3_600_000, "limit": 1500}
    assert early.kline_list("ETHUSDT", "5m", **window) == later.kline_list(
        "ETHUSDT", "5m", **window
    )


def test_candles_agree_with_the_price_stream() -> None:
    feed = frozen()
    rows = feed.kline_list("BTCUSDT", "1m", limit=120)
    for before, after in pairwise(rows):
        boundary = before.close_time + 1
        # A candle closes at exactly the price the stream shows at the boundary.
        assert before.close == feed.price_at("BTCUSDT", boundary) == after.open
        assert after.open_time == boundary
    current = rows[-1]
    assert current.open_time <= NOW <= current.close_time
    assert (
        current.close == feed.price_at("BTCUSDT", NOW) == feed.quote_at("BTCUSDT", NOW).last_price
    )
    # Every sample inside a candle lies within its high and low.
    for t in range(rows[-2].open_time, NOW, 1_000):
        row = kline_at(feed, "BTCUSDT", t)
        assert row.low <= feed.price_at("BTCUSDT", t) <= row.high


def test_prices_sit_on_the_tick_grid_and_volumes_on_the_step_grid() -> None:
    feed = frozen()
    for symbol, instrument in feed.instruments().items():
        tick, step = instrument.tick_size, instrument.step_size
        for row in feed.kline_list(symbol, "15m", limit=200):
            assert all(p % tick == 0 for p in (row.open, row.high, row.low, row.close))
            assert row.low <= min(row.open, row.close) <= max(row.open, row.close) <= row.high
            assert row.volume % step == 0 and row.volume > 0
            assert row.taker_buy_volume <= row.volume
        quote = feed.quote_at(symbol, NOW)
        for price in (quote.mark_price, quote.last_price, quote.index_price):
            assert price % tick == 0
            assert abs(price - quote.last_price) <= quote.last_price * Decimal("0.0002") + tick


def test_quotes_look_like_binance() -> None:
    feed = frozen()
    quote = feed.quote_at("ETHUSDT", NOW)
    assert quote.next_funding_time % (8 * 3_600_000) == 0
    assert 0 < quote.next_funding_time - NOW <= 8 * 3_600_000
    assert Decimal("0.00002") <= quote.funding_rate <= Decimal("0.00018")
    assert quote.time == NOW
    with pytest.raises(UnknownSymbol):
        feed.quote_at("NOPEUSDT", NOW)
    with pytest.raises(ValueError, match="no profile"):
        SimFeed(symbols=["NOPEUSDT"])


async def test_live_ticks_match_history() -> None:
    feed = SimFeed(seed=7, tick_ms=50, symbols=["BTCUSDT", "SOLUSDT"])
    seen: list[Quote] = []

    async def collect(quote: Quote) -> None:
        seen.append(quote)

    feed.on_tick(collect)
    await feed.start()
    await eventually(lambda: len(seen) >= 2 * 8)  # eight ticks of two symbols
    status = feed.status()
    await feed.stop()
    assert status["connected"] is True and status["stale"] is False and status["simulated"] is True
    assert {q.symbol for q in seen} == {"BTCUSDT", "SOLUSDT"}
    for q in seen:
        assert q.time % 50 == 0  # quotes are stamped on the tick grid...
        assert q.last_price == feed.price_at(q.symbol, q.time)  # ...and are the path's price
        row = kline_at(feed, q.symbol, q.time)
        assert row.low <= q.last_price <= row.high
    assert feed.quote("BTCUSDT") == [q for q in seen if q.symbol == "BTCUSDT"][-1]


async def test_set_price_pins_the_market_and_publishes_at_once() -> None:
    feed = SimFeed(seed=1, tick_ms=50, symbols=["BTCUSDT", "ETHUSDT"])
    seen: list[Quote] = []

    async def collect(quote: Quote) -> None:
        seen.append(quote)

    feed.on_tick(collect)
    await feed.start()
    try:
        pinned = await feed.set_price("BTCUSDT", "43210.47")
        assert seen[-1] == pinned  # delivered before set_price returned
        assert pinned.mark_price == pinned.last_price == pinned.index_price == Decimal("43210.5")

        def later(since: int) -> list[Quote]:
            return [q for q in seen if q.symbol == "BTCUSDT" and q.time > since]

        await eventually(lambda: len(later(pinned.time)) >= 2)
        assert all(q.mark_price == Decimal("43210.5") for q in later(pinned.time))
        current = (await feed.klines("BTCUSDT", "1m", limit=1))[0]
        assert current.close == Decimal("43210.5")
        assert current.low <= Decimal("43210.5") <= current.high
        assert "BTCUSDT" in str(feed.status()["detail"])
        released = await feed.release_price("BTCUSDT")
        assert released.last_price == feed.price_at("BTCUSDT", released.time)
        await eventually(lambda: len(later(released.time)) >= 2)
        assert all(q.last_price == feed.price_at("BTCUSDT", q.time) for q in later(released.time))
        with pytest.raises(ValueError, match="below one tick"):
            await feed.set_price("BTCUSDT", "0.01")
        with pytest.raises(TypeError):
            await feed.set_price("BTCUSDT", 1.5)  # type: ignore[arg-type]
        with pytest.raises(UnknownSymbol):
            await feed.set_price("NOPEUSDT", "1")
    finally:
        await feed.stop()
    assert feed.status()["connected"] is False


async def test_handlers_are_isolated_and_may_publish_from_inside(
    caplog: pytest.LogCaptureFixture,
) -> None:
    feed = SimFeed(seed=3, tick_ms=50, symbols=["ETHUSDT"])
    seen: list[Quote] = []

    async def broken(quote: Quote) -> None:
        raise RuntimeError("consumer bug")

    async def pin_once(quote: Quote) -> None:
        seen.append(quote)
        if len(seen) == 1:
            await feed.set_price("ETHUSDT", "2000")  # publishing from a handler must not deadlock

    feed.on_tick(broken)
    feed.on_tick(pin_once)
    async with asyncio.timeout(5):
        await feed.start()
        await eventually(lambda: len(seen) >= 3)
        await feed.stop()
    assert seen[1].last_price == Decimal(2000) and len(seen) >= 3
    assert all(q.last_price == Decimal(2000) for q in seen[1:])
    assert "consumer bug" in caplog.text
