"""Replays recorded candles or ticks as a live market, faster or slower than real time."""

import asyncio
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from papertrade.kit.tasks import cancel_and_wait
from papertrade.kit.time import now_ms
from papertrade.market.fanout import TickFanout, feed_status, ticker_extras
from papertrade.market.feed import TickHandler, UnknownSymbol
from papertrade.market.intervals import candle_open, candle_opens, interval_ms, next_open
from papertrade.market.replay_data import Candle, Point, Tape, load_tapes
from papertrade.trading.funding import FUNDING_INTERVAL_MS, next_funding_time
from papertrade.trading.values import FundingRecord, Instrument, Kline, Quote, Ticker24h

SAMPLE_PATH = Path(__file__).parent / "data" / "replay_sample"
DEFAULT_FUNDING = Decimal("0.00010000")
_DAY_MS = 86_400_000


class ReplayFeed:
    """Plays CSV recordings through the handlers; history never runs ahead of the replay.

    Replay (data) time starts at the earliest row and advances `speed` times faster than the wall
    clock. Quotes carry the wall-clock time they were published (so staleness checks work as with
    a live feed); klines, the 24h ticker and funding history use data time, up to the cursor.
    """

    name = "replay"

    def __init__(
        self,
        path: str | Path = SAMPLE_PATH,
        speed: float = 1.0,
        loop: bool = False,
        *,
        tick_ms: int = 1000,
        stale_after_ms: int = 15_000,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        if speed <= 0:
            raise ValueError("speed must be positive")
        self.path, self.speed, self.loop = Path(path), speed, loop
        self.tick_ms, self.stale_after_ms = tick_ms, stale_after_ms
        self._clock = clock
        self._tapes = load_tapes(self.path)
        self.first_ms = min(t.points[0].time for t in self._tapes.values())
        self.last_ms = max(t.points[-1].time for t in self._tapes.values())
        self._wall_start: int | None = None
        self._next = dict.fromkeys(self._tapes, 0)  # next point to publish, per symbol
        self._published_at = dict.fromkeys(self._tapes, 0)  # wall ms of the last quote
        self._data_time: dict[str, int] = {}
        self._quotes: dict[str, Quote] = {}
        self._fanout = TickFanout()
        self._task: asyncio.Task[None] | None = None
        self._last_update: int | None = None
        self.finished = False
        self.rounds = 0  # completed passes when looping

    # -- clock and lifecycle -----------------------------------------------------------------------

    def replay_time(self) -> int:
        """The data-time cursor: nothing after it is visible."""
        if self._wall_start is None:
            return self.first_ms
        moved = int((self._clock() - self._wall_start) * self.speed)
        return min(self.first_ms + moved, self.last_ms)

    def data_time(self, symbol: str) -> int | None:
        """Data time of the last quote published for `symbol`."""
        return self._data_time.get(symbol)

    async def start(self) -> None:
        """Start the replay clock and publish the first rows.

        A feed that ran before or was resume()d keeps its clock: it goes on from the row in force
        at the cursor (time spent stopped counts, as for a live market).
        """
        if self._task is not None:
            return
        if self._wall_start is None:
            self._wall_start = self._clock()
            await self._publish_due(self.first_ms)
        else:
            cursor = self.replay_time()
            self._skip_to(cursor)
            await self._publish_due(cursor)
        self._task = asyncio.create_task(self._run(), name="replay-feed")

    def checkpoint(self) -> dict[str, int] | None:
        """Where the replay is: enough for another process to continue it (None before start)."""
        if self._wall_start is None:
            return None
        return {"wall_start": self._wall_start, "rounds": self.rounds}

    def resume(self, state: dict[str, int]) -> None:
        """Take the clock of a replay another process runs (ignored while this one plays).

        Scale-out: followers keep their history in step with the leader's replay, and a process
        that takes over goes on where the previous leader was instead of starting over.
        """
        if self._task is not None:
            return
        self._wall_start = int(state["wall_start"])
        self.rounds = int(state.get("rounds", self.rounds))

    def _skip_to(self, cursor: int) -> None:
        """Next to publish: the row in force at the cursor (no burst of the rows before it)."""
        for symbol, tape in self._tapes.items():
            self._next[symbol] = max(bisect_right(tape.point_times, cursor) - 1, 0)

    async def stop(self) -> None:
        """Stop publishing (history stays at the cursor reached)."""
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)

    def on_tick(self, handler: TickHandler) -> None:
        """Register a coroutine called with every new quote."""
        self._fanout.add(handler)

    async def _run(self) -> None:
        assert self._wall_start is not None
        while True:
            cursor = self.first_ms + int((self._clock() - self._wall_start) * self.speed)
            if cursor > self.last_ms:
                await self._publish_due(self.last_ms)
                if not self.loop:
                    self.finished = True
                    return
                self.rounds += 1
                self._wall_start = self._clock()
                self._next = dict.fromkeys(self._tapes, 0)
                continue
            await self._publish_due(cursor)
            upcoming = [
                tape.points[i].time
                for tape, i in ((t, self._next[s]) for s, t in self._tapes.items())
                if i < len(tape.points)
            ]
            wait = (min(upcoming, default=cursor) - cursor) / self.speed
            await asyncio.sleep(max(0.001, min(wait, self.tick_ms) / 1000))

    async def _publish_due(self, cursor: int) -> None:
        """Publish every recorded point up to the cursor in time order, then heartbeats."""
        due: list[tuple[int, str, Point]] = []
        for symbol, tape in self._tapes.items():
            i = start = self._next[symbol]
            while i < len(tape.points) and tape.points[i].time <= cursor:
                due.append((tape.points[i].time, symbol, tape.points[i]))
                i += 1
            self._next[symbol] = i
            quiet = self._clock() - self._published_at[symbol] >= self.tick_ms
            if i == start and 0 < i < len(tape.points) and quiet:
                # Between recorded points: the interpolated price keeps quotes fresh.
                price = tape.price_at(cursor)
                assert price is not None
                due.append((cursor, symbol, tape.points[i - 1]._replace(price=price)))
        due.sort(key=lambda item: item[0])  # stable: symbols interleave by data time
        for t, symbol, point in due:
            wall = self._clock()
            quote = self._quote(self._tapes[symbol], point, point.price, wall)
            self._quotes[symbol] = quote
            self._data_time[symbol] = t
            self._published_at[symbol] = self._last_update = wall
            await self._fanout.publish([quote])

    def _quote(self, tape: Tape, point: Point, price: Decimal, wall: int) -> Quote:
        previous = self._quotes.get(tape.symbol)
        funding = point.funding or (previous.funding_rate if previous else DEFAULT_FUNDING)
        mark = point.mark or price
        return Quote(
            symbol=tape.symbol,
            mark_price=mark,
            last_price=price,
            index_price=mark,
            funding_rate=funding,
            next_funding_time=next_funding_time(wall),
            time=wall,
        )

    # -- state and history -------------------------------------------------------------------------

    def _tape(self, symbol: str) -> Tape:
        found = self._tapes.get(symbol)
        if found is None:
            raise UnknownSymbol(symbol)
        return found

    def instruments(self) -> dict[str, Instrument]:
        """Catalogue instruments for known symbols, derived ones for the rest."""
        return {s: t.instrument for s, t in self._tapes.items()}

    def quote(self, symbol: str) -> Quote | None:
        """The latest published quote."""
        return self._quotes.get(symbol)

    def quotes(self) -> dict[str, Quote]:
        """The latest published quote of every symbol."""
        return dict(self._quotes)

    def _bar(self, tape: Tape, t0: int, t1: int, cursor: int) -> Candle | None:
        """Base candles opening in [t0, t1) as one candle, cut at the cursor."""
        lo = bisect_left(tape.candle_times, t0)
        window = tape.candles[lo : bisect_left(tape.candle_times, t1)]
        # A base candle is complete once its last millisecond (where its close is) is played.
        parts = [c for c in window if c.open_time + tape.base_ms - 1 <= cursor]
        if len(parts) < len(window) and window[len(parts)].open_time <= cursor:
            parts.append(self._partial(tape, window[len(parts)], cursor))
        if not parts:
            return None
        return Candle(
            parts[0].open_time,
            parts[0].open,
            max(c.high for c in parts),
            min(c.low for c in parts),
            parts[-1].close,
            sum((c.volume for c in parts), Decimal(0)),
        )

    def _partial(self, tape: Tape, candle: Candle, cursor: int) -> Candle:
        """The base candle in progress: only what was replayed by the cursor."""
        lo = bisect_left(tape.point_times, candle.open_time)
        hi = bisect_right(tape.point_times, cursor)
        current = tape.price_at(cursor)
        assert current is not None
        seen = [p.price for p in tape.points[lo:hi]] + [current]
        share = Decimal(cursor - candle.open_time) / Decimal(tape.base_ms)
        volume = (candle.volume * share).quantize(candle.volume) if candle.volume else Decimal(0)
        return Candle(candle.open_time, seen[0], max(seen), min(seen), current, volume)

    @staticmethod
    def _kline(open_ms: int, close_ms: int, c: Candle) -> Kline:
        return Kline(
            open_ms, c.open, c.high, c.low, c.close, c.volume, close_ms, c.volume * c.close
        )

    async def klines(
        self,
        symbol: str,
        interval: str,
        start_ms: int | None = None,
        end_ms: int | None = None,
        limit: int = 500,
    ) -> list[Kline]:
        """Candles aggregated from the recording, never beyond the replay cursor."""
        tape, cursor = self._tape(symbol), self.replay_time()
        length = interval_ms(interval)
        if interval != "1M" and (length < tape.base_ms or length % tape.base_ms):
            raise ValueError(
                f"{symbol} is recorded in {tape.base_ms // 60_000}m candles; "
                f"{interval} klines cannot be built from them"
            )
        first = candle_open(interval, tape.candles[0].open_time)
        opens = candle_opens(
            interval,
            start_ms=start_ms,
            end_ms=end_ms,
            limit=limit,
            first_ms=first,
            now_ms=cursor,
        )
        rows = []
        for open_ms in opens:
            following = next_open(interval, open_ms)
            bar = self._bar(tape, open_ms, following, cursor)
            if bar is not None:
                rows.append(self._kline(open_ms, following - 1, bar))
        return rows

    async def ticker_24h(self, symbol: str) -> Ticker24h:
        """24 h statistics up to the cursor, from the recording."""
        tape, cursor = self._tape(symbol), self.replay_time()
        bar = self._bar(tape, cursor - _DAY_MS, cursor + 1, cursor)
        if bar is None:
            price = tape.points[0].price
            bar = Candle(cursor, price, price, price, price, Decimal(0))
        quote_volume = bar.volume * bar.close
        return Ticker24h(
            symbol=symbol,
            open_price=bar.open,
            high_price=bar.high,
            low_price=bar.low,
            last_price=bar.close,
            volume=bar.volume,
            quote_volume=quote_volume,
            open_time=bar.open_time,
            close_time=cursor,
            extra=ticker_extras(
                bar.open, bar.close, bar.volume, quote_volume, tape.instrument.tick_size
            ),
        )

    async def funding_history(
        self, symbol: str, start_ms: int | None, end_ms: int | None, limit: int
    ) -> list[FundingRecord]:
        """Funding on the 8 h grid of data time, from recorded rates or the 0.01 % baseline."""
        tape, cursor = self._tape(symbol), self.replay_time()
        step = FUNDING_INTERVAL_MS
        first = -(-tape.points[0].time // step) * step
        last = cursor // step * step if end_ms is None else min(cursor, end_ms) // step * step
        if start_ms is not None:
            times = list(range(max(first, -(-start_ms // step) * step), last + 1, step))[:limit]
        else:
            times = list(range(max(first, last - (limit - 1) * step), last + 1, step))
        records = []
        for t in times:
            point = tape.last_point(t)
            price = tape.price_at(t)
            if point is None or price is None:
                continue
            rate = tape.funding_at(t) or DEFAULT_FUNDING
            records.append(FundingRecord(symbol, rate, t, point.mark or price))
        return records

    def status(self) -> dict[str, object]:
        """Replay progress; simulated, and stale once finished or silent."""
        running = self._task is not None and not self._task.done()
        now = self._clock()
        quiet = None if self._last_update is None else now - self._last_update
        stale = not running or quiet is None or quiet > self.stale_after_ms
        state = "finished" if self.finished else ("playing" if running else "stopped")
        detail = (
            f"replay of {self.path} at {self.speed:g}x, {state}; data time {self.replay_time()} "
            f"of {self.first_ms}..{self.last_ms}, loop={'on' if self.loop else 'off'}"
        )
        return feed_status(
            "replay",
            simulated=True,
            connected=running,
            last_update=self._last_update,
            stale=stale,
            detail=detail,
            replay_time=self.replay_time(),
        )
