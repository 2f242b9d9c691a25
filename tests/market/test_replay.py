"""The replay feed: plays recordings through the handlers, and never shows the future."""

from decimal import Decimal
from pathlib import Path

import pytest

from papertrade.market.catalogue import DEFAULT_BRACKETS, catalogue
from papertrade.market.feed import UnknownSymbol
from papertrade.market.replay import SAMPLE_PATH, ReplayFeed
from papertrade.market.replay_data import Candle, load_tapes
from papertrade.market.sample import SAMPLE_START_MS, write_replay_sample
from papertrade.trading.values import Kline, Quote
from tests.market.support import eventually

MINUTE = 60_000


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, t: int = 1_800_000_000_000) -> None:
        self.t = t

    def __call__(self) -> int:
        return self.t


def ohlcv(row: Kline) -> tuple[object, ...]:
    return (row.open_time, row.open, row.high, row.low, row.close, row.volume)


def sample_candles(symbol: str) -> list[Candle]:
    return load_tapes(SAMPLE_PATH)[symbol].candles


def test_the_shipped_sample_is_reproducible(tmp_path: Path) -> None:
    written = write_replay_sample(tmp_path)
    assert [p.name for p in written] == ["BTCUSDT.csv", "ETHUSDT.csv"]
    for path in written:
        shipped = SAMPLE_PATH / path.name
        assert path.read_bytes() == shipped.read_bytes()
        assert shipped.stat().st_size < 100_000
    tapes = load_tapes(SAMPLE_PATH)
    assert tapes["BTCUSDT"].instrument == catalogue()["BTCUSDT"]
    assert len(tapes["BTCUSDT"].candles) == 360
    assert tapes["ETHUSDT"].candles[0].open_time == SAMPLE_START_MS


async def test_plays_the_sample_through_handlers_without_look_ahead() -> None:
    feed = ReplayFeed(SAMPLE_PATH, speed=100_000)
    seen: list[tuple[Quote, int]] = []
    peeks: list[tuple[int, int]] = []

    async def collect(quote: Quote) -> None:
        seen.append((quote, feed.data_time(quote.symbol) or 0))
        if len(seen) % 97 == 0:  # now and then, look at history from inside the stream
            rows = await feed.klines(quote.symbol, "1m", limit=1500)
            peeks.append((rows[-1].open_time, feed.replay_time()))

    feed.on_tick(collect)
    await feed.start()
    await eventually(lambda: feed.finished)
    status = feed.status()
    await feed.stop()
    assert status["simulated"] is True and status["connected"] is False and status["stale"] is True
    assert peeks and all(open_time <= cursor for open_time, cursor in peeks)
    for symbol in ("BTCUSDT", "ETHUSDT"):
        candles = sample_candles(symbol)
        emitted = [(t, q.last_price) for q, t in seen if q.symbol == symbol]
        assert [t for t, _ in emitted] == sorted(t for t, _ in emitted)
        by_minute: dict[int, list[Decimal]] = {}
        for t, price in emitted:
            by_minute.setdefault(t // MINUTE * MINUTE, []).append(price)
        for c in candles:
            prices = by_minute[c.open_time]
            # Open first, both extremes touched (resting limits inside fill), close last.
            assert prices[0] == c.open and prices[-1] == c.close
            assert c.high in prices and c.low in prices
            assert all(c.low <= p <= c.high for p in prices)
        # Once finished, the history is the recording itself.
        rows = await feed.klines(symbol, "1m", limit=1500)
        assert [ohlcv(r) for r in rows] == [tuple(c) for c in candles]


async def test_history_stops_at_the_cursor() -> None:
    clock = Clock()
    feed = ReplayFeed(SAMPLE_PATH, speed=60, clock=clock)  # one recorded minute per second
    await feed.start()
    try:
        candles = sample_candles("BTCUSDT")
        clock.t += 1_500  # 90 s of data: the second candle is half played (first extreme seen)
        cursor = feed.replay_time()
        assert cursor == SAMPLE_START_MS + 90_000
        rows = await feed.klines("BTCUSDT", "1m", limit=10)
        assert len(rows) == 2
        assert ohlcv(rows[0]) == tuple(candles[0])
        partial, full = rows[1], candles[1]
        first, second = (full.low, full.high) if full.close >= full.open else (full.high, full.low)
        # 30 s into the candle: open (0 s) and the first extreme (20 s) have been played, and the
        # price is halfway to the second extreme (40 s); the close (59.999 s) is still unknown.
        halfway = ((first + second) / 2 / Decimal("0.10")).quantize(Decimal(1)) * Decimal("0.10")
        assert partial.open == full.open and partial.close == halfway
        assert partial.high == max(full.open, first, halfway)
        assert partial.low == min(full.open, first, halfway)
        assert partial.volume == (full.volume / 2).quantize(full.volume)
        five = await feed.klines("BTCUSDT", "5m", limit=10)
        assert len(five) == 1 and five[0].close == partial.close
        assert (await feed.ticker_24h("BTCUSDT")).last_price == partial.close
        assert await feed.klines("BTCUSDT", "1m", start_ms=cursor + MINUTE) == []
        clock.t += 10**9  # far past the end: everything is visible, aggregated
        hours = await feed.klines("BTCUSDT", "1h", limit=10)
        assert len(hours) == 6
        first_hour = candles[:60]
        assert (hours[0].open, hours[0].high, hours[0].low, hours[0].close) == (
            first_hour[0].open,
            max(c.high for c in first_hour),
            min(c.low for c in first_hour),
            first_hour[-1].close,
        )
        with pytest.raises(UnknownSymbol):
            await feed.klines("SOLUSDT", "1m")
    finally:
        await feed.stop()


async def test_tick_files_with_marks_and_funding(tmp_path: Path) -> None:
    t0 = SAMPLE_START_MS - 10_000  # ten seconds before a funding time
    lines = ["time,price,mark_price,funding_rate"]
    for k in range(30):
        price = Decimal("1.2340") + Decimal(k % 7) / 1000
        rate = "0.00030000" if k < 3 else ""
        lines.append(f"{t0 + k * 5_000},{price},{price + Decimal('0.0001')},{rate}")
    (tmp_path / "XYZUSDT.csv").write_text("\n".join(lines) + "\n")
    seen: list[Quote] = []
    feed = ReplayFeed(tmp_path, speed=1_000, tick_ms=20)

    async def collect(quote: Quote) -> None:
        seen.append(quote)

    feed.on_tick(collect)
    instrument = feed.instruments()["XYZUSDT"]
    assert (instrument.tick_size, instrument.brackets) == (Decimal("0.0001"), DEFAULT_BRACKETS)
    await feed.start()
    await eventually(lambda: feed.finished)
    await feed.stop()
    recorded = [q for q in seen if q.last_price + Decimal("0.0001") == q.mark_price]
    assert len(recorded) == len(seen) >= 30
    assert all(q.funding_rate == Decimal("0.00030000") for q in seen)
    rows = await feed.klines("XYZUSDT", "1m", limit=5)
    assert [r.open_time for r in rows] == [t0 // MINUTE * MINUTE + k * MINUTE for k in range(4)]
    assert rows[0].open == Decimal("1.2340") and rows[-1].close == Decimal(lines[-1].split(",")[1])
    (funding,) = await feed.funding_history("XYZUSDT", None, None, 10)
    assert funding.funding_time == SAMPLE_START_MS
    assert funding.funding_rate == Decimal("0.00030000")
    assert funding.mark_price == Decimal("1.2361")  # the mark recorded at 00:00:00 (third row)


async def test_loops_when_asked(tmp_path: Path) -> None:
    rows = [f"{SAMPLE_START_MS + k * MINUTE},10.0,10.5,9.5,10.2,3" for k in range(3)]
    (tmp_path / "ABCUSDT.csv").write_text(
        "open_time,open,high,low,close,volume\n" + "\n".join(rows)
    )
    count = 0

    async def tally(quote: Quote) -> None:
        nonlocal count
        count += 1

    feed = ReplayFeed(tmp_path, speed=200_000, loop=True)
    feed.on_tick(tally)
    await feed.start()
    await eventually(lambda: feed.rounds >= 3)
    assert feed.status()["connected"] is True and not feed.finished
    await feed.stop()
    assert count >= 3 * 12


async def test_coarser_recordings_serve_coarser_intervals_only(tmp_path: Path) -> None:
    rows = [f"{SAMPLE_START_MS + k * 300_000},10.0,10.5,9.5,10.2,3" for k in range(6)]
    (tmp_path / "ABCUSDT.csv").write_text(
        "open_time,open,high,low,close,volume\n" + "\n".join(rows)
    )
    clock = Clock()
    feed = ReplayFeed(tmp_path, clock=clock)
    await feed.start()
    await feed.stop()
    clock.t += 10**9
    with pytest.raises(ValueError, match="cannot be built"):
        await feed.klines("ABCUSDT", "1m")
    quarter = await feed.klines("ABCUSDT", "15m")
    assert [(r.open_time, r.volume) for r in quarter] == [
        (SAMPLE_START_MS, Decimal(9)),
        (SAMPLE_START_MS + 900_000, Decimal(9)),
    ]


def test_bad_files_are_refused(tmp_path: Path) -> None:
    bad = tmp_path / "BADUSDT.csv"
    bad.write_text("when,what\n1,2\n")
    with pytest.raises(ValueError, match="header"):
        load_tapes(bad)
    bad.write_text("open_time,open,high,low,close,volume\n1,10,9,8,10,1\n")
    with pytest.raises(ValueError, match="high/low"):
        load_tapes(bad)
    with pytest.raises(FileNotFoundError):
        load_tapes(tmp_path / "missing")


async def test_another_process_resumes_the_replay_where_it_is() -> None:
    clock = Clock()
    leader = ReplayFeed(SAMPLE_PATH, speed=60, clock=clock)
    assert leader.checkpoint() is None
    await leader.start()
    clock.t += 30 * MINUTE // 60  # 30 minutes of data at 60x
    state = leader.checkpoint()
    assert state is not None
    await leader.stop()

    standby = ReplayFeed(SAMPLE_PATH, speed=60, clock=clock)
    standby.resume(state)
    assert standby.replay_time() == leader.replay_time() == SAMPLE_START_MS + 30 * MINUTE
    rows = await standby.klines("BTCUSDT", "1m", limit=1500)
    assert rows[-1].open_time == SAMPLE_START_MS + 30 * MINUTE  # history in step, no further
    seen: list[Quote] = []

    async def collect(quote: Quote) -> None:
        seen.append(quote)

    standby.on_tick(collect)
    await standby.start()  # takes over: goes on from the cursor, not from the first row
    await standby.stop()
    btc = [q for q in seen if q.symbol == "BTCUSDT"]
    assert len(btc) == 1
    assert btc[0].last_price == load_tapes(SAMPLE_PATH)["BTCUSDT"].price_at(standby.replay_time())
