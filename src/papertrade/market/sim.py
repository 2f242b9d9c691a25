"""A deterministic, seeded simulated market that needs no network."""

import asyncio
import math
from collections.abc import Callable, Iterable
from decimal import ROUND_HALF_EVEN, Decimal

from papertrade.kit.decimals import D
from papertrade.kit.tasks import cancel_and_wait
from papertrade.kit.time import now_ms
from papertrade.market.catalogue import catalogue, sim_profile
from papertrade.market.fanout import TickFanout, feed_status, ticker_extras
from papertrade.market.feed import TickHandler, UnknownSymbol
from papertrade.market.intervals import candle_opens, next_open
from papertrade.market.simpath import DAY_MS, MINUTE_MS, Bar, PathParams, PricePath, stable_unit
from papertrade.trading.funding import FUNDING_INTERVAL_MS, next_funding_time
from papertrade.trading.values import FundingRecord, Instrument, Kline, Quote, Ticker24h

_BASIS = 0.0001  # mark and index sit within ±1 bp of the last price
_BASIS_PERIOD_MS = 437_000  # an odd period so the basis does not repeat on the minute
_RATE_PLACES = Decimal("0.00000001")
_FOREVER = 2**62
Pin = tuple[int, int, int]  # (start ms, end ms exclusive, price in ticks)


class SimFeed:
    """Seeded random-walk prices for the catalogued symbols, with history back `history_days`.

    Every price is a pure function of (seed, symbol, time): two feeds with the same seed agree on
    every past candle, and a candle's close is exactly what the live stream showed at that time.
    """

    name = "sim"

    def __init__(
        self,
        seed: int = 42,
        tick_ms: int = 1000,
        *,
        symbols: Iterable[str] | None = None,
        history_days: int = 90,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        if tick_ms < 1:
            raise ValueError("tick_ms must be at least 1")
        known = catalogue()
        chosen = list(known) if symbols is None else list(symbols)
        missing = [s for s in chosen if s not in known]
        if missing:
            raise ValueError(f"the simulation has no profile for {', '.join(missing)}")
        self.seed, self.tick_ms = seed, tick_ms
        self._clock = clock
        self._instruments = {s: known[s] for s in chosen}
        self._paths = {
            s: PricePath(PathParams.build(seed, known[s], sim_profile(s))) for s in chosen
        }
        self.first_ms = (clock() // DAY_MS - history_days) * DAY_MS  # history starts here
        self._quotes: dict[str, Quote] = {}
        self._pins: dict[str, int] = {}
        self._last_pins: dict[str, int] = {}  # a pinned last price apart from the mark
        self._pin_log: dict[str, list[Pin]] = {}
        self._fanout = TickFanout()
        self._task: asyncio.Task[None] | None = None
        self._last_update: int | None = None

    # -- lifecycle and live stream -------------------------------------------------------------

    async def start(self) -> None:
        """Publish a first quote per symbol and start ticking every `tick_ms`."""
        if self._task is not None:
            return
        now = self._clock()
        await self._publish_all(now // self.tick_ms * self.tick_ms)
        self._task = asyncio.create_task(self._run(), name="sim-feed")

    async def stop(self) -> None:
        """Stop ticking (quotes and history stay available)."""
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)

    def on_tick(self, handler: TickHandler) -> None:
        """Register a coroutine called with every new quote."""
        self._fanout.add(handler)

    async def _run(self) -> None:
        step = self.tick_ms
        due = (self._clock() // step + 1) * step
        while True:
            delay = due - self._clock()
            if delay > 0:
                await asyncio.sleep(delay / 1000)
            late = self._clock() - due
            if late > 10 * step:
                due += late // step * step  # after a stall, skip ahead rather than burst
            await self._publish_all(due)
            due += step

    async def _publish_all(self, t: int) -> None:
        quotes = [self.quote_at(symbol, t) for symbol in self._paths]
        self._quotes.update((q.symbol, q) for q in quotes)
        self._last_update = t
        await self._fanout.publish(quotes)

    # -- test hook -------------------------------------------------------------------------------

    async def set_price(
        self,
        symbol: str,
        price: Decimal | str | int | None,
        *,
        last: Decimal | str | int | None = None,
    ) -> Quote:
        """Pin the live price (mark = last = index) and publish it at once; None releases it.

        `last` pins the last traded price apart from the mark (a trade away from the mark), so
        that what watches the last price (CONTRACT_PRICE triggers) can be told from what watches
        the mark. The price history keeps the mark."""
        instrument = self._instrument(symbol)
        self._last_pins.pop(symbol, None)
        if last is not None and price is not None:
            self._last_pins[symbol] = self._ticks(instrument, last)
        now = self._clock()
        log = self._pin_log.setdefault(symbol, [])
        if log and log[-1][1] == _FOREVER:
            start, _, ticks = log[-1]
            log[-1] = (start, now, ticks)
        if price is None:
            self._pins.pop(symbol, None)
        else:
            ticks = self._ticks(instrument, price)
            self._pins[symbol] = ticks
            log.append((now, _FOREVER, ticks))
        quote = self.quote_at(symbol, now)
        self._quotes[symbol] = quote
        await self._fanout.publish([quote])
        return quote

    @staticmethod
    def _ticks(instrument: Instrument, price: Decimal | str | int) -> int:
        ticks = int((D(price) / instrument.tick_size).to_integral_value(ROUND_HALF_EVEN))
        if ticks < 1:
            raise ValueError(f"price {price} is below one tick of {instrument.symbol}")
        return ticks

    async def release_price(self, symbol: str) -> Quote:
        """Let the price follow the simulated path again."""
        return await self.set_price(symbol, None)

    # -- prices ------------------------------------------------------------------------------------

    def _instrument(self, symbol: str) -> Instrument:
        found = self._instruments.get(symbol)
        if found is None:
            raise UnknownSymbol(symbol)
        return found

    def _path(self, symbol: str) -> PricePath:
        self._instrument(symbol)
        return self._paths[symbol]

    def price_at(self, symbol: str, t_ms: int) -> Decimal:
        """The simulated last price at any time (ignores set_price pins)."""
        return self._instruments[symbol].tick_size * self._path(symbol).ticks_at(t_ms)

    def quote_at(self, symbol: str, t_ms: int) -> Quote:
        """The live quote for time `t_ms` (a pin set with set_price wins)."""
        path, tick = self._path(symbol), self._instruments[symbol].tick_size
        pinned = self._pins.get(symbol)
        if pinned is not None:
            mark = index = pinned
            last = self._last_pins.get(symbol, pinned)
        else:
            last, mark, index = self._path_ticks(path, t_ms)
        settle = next_funding_time(t_ms)
        return Quote(
            symbol=symbol,
            mark_price=tick * mark,
            last_price=tick * last,
            index_price=tick * index,
            funding_rate=self.funding_rate(symbol, settle),
            next_funding_time=settle,
            time=t_ms,
        )

    def _path_ticks(self, path: PricePath, t_ms: int) -> tuple[int, int, int]:
        """(last, mark, index) in ticks from the path alone."""
        x = path.log_at(t_ms)
        phase = stable_unit(self.seed, path.params.symbol, "basis") * math.pi
        basis = _BASIS * math.sin(2 * math.pi * t_ms / _BASIS_PERIOD_MS + phase)
        return path.to_ticks(x), path.to_ticks(x + basis), path.to_ticks(x - basis / 2)

    def funding_rate(self, symbol: str, funding_time: int) -> Decimal:
        """The rate settled at `funding_time` (mostly near Binance's 0.01 % baseline)."""
        u = stable_unit(self.seed, symbol, "funding", funding_time // FUNDING_INTERVAL_MS)
        micro = round(100 + 80 * u * abs(u))  # 0.002 % .. 0.018 %, clustered near 0.01 %
        return Decimal(micro).scaleb(-6).quantize(_RATE_PLACES)

    def instruments(self) -> dict[str, Instrument]:
        """The simulated instruments (real Binance filters from the catalogue)."""
        return dict(self._instruments)

    def quote(self, symbol: str) -> Quote | None:
        """The latest published quote, or None before start()."""
        return self._quotes.get(symbol)

    def quotes(self) -> dict[str, Quote]:
        """The latest published quote of every symbol."""
        return dict(self._quotes)

    # -- history -----------------------------------------------------------------------------------

    def _pin_at(self, symbol: str, t_ms: int) -> int | None:
        """The pinned price in force at `t_ms`, if any."""
        for start, end, ticks in reversed(self._pin_log.get(symbol, ())):
            if start <= t_ms < end:
                return ticks
        return None

    def _overlay(self, symbol: str, t0: int, t1: int, bar: Bar) -> Bar:
        """Fold set_price pins that overlap [t0, t1] into a bar."""
        pins = self._pin_log.get(symbol)
        if not pins:
            return bar
        o, h, low, c = bar.open, bar.high, bar.low, bar.close
        for start, end, ticks in pins:
            if start > t1 or end <= t0:
                continue
            h, low = max(h, ticks), min(low, ticks)
            if start <= t0 < end:
                o = ticks
            if start <= t1 < end:
                c = ticks
        return bar._replace(open=o, high=h, low=low, close=c)

    def _kline(self, instrument: Instrument, open_ms: int, close_ms: int, bar: Bar) -> Kline:
        tick, step = instrument.tick_size, instrument.step_size
        quote = step * tick * bar.quote_volume
        taker = bar.volume * (45 + bar.close % 11) // 100  # a deterministic 45-55 % buy share
        return Kline(
            open_time=open_ms,
            open=tick * bar.open,
            high=tick * bar.high,
            low=tick * bar.low,
            close=tick * bar.close,
            volume=step * bar.volume,
            close_time=close_ms,
            quote_volume=quote,
            trades=int(quote // 1500),
            taker_buy_volume=step * taker,
            taker_buy_quote_volume=step * tick * taker * bar.close,
        )

    def kline_list(
        self,
        symbol: str,
        interval: str,
        start_ms: int | None = None,
        end_ms: int | None = None,
        limit: int = 500,
    ) -> list[Kline]:
        """klines() without the coroutine (same Binance window rules)."""
        path, instrument = self._path(symbol), self._instruments[symbol]
        now = self._clock()
        opens = candle_opens(
            interval,
            start_ms=start_ms,
            end_ms=end_ms,
            limit=limit,
            first_ms=self.first_ms,
            now_ms=now,
        )
        rows = []
        for open_ms in opens:
            following = next_open(interval, open_ms)
            until = min(following, now)
            bar = self._overlay(symbol, open_ms, until, path.summary(open_ms, until))
            rows.append(self._kline(instrument, open_ms, following - 1, bar))
        return rows

    async def klines(
        self,
        symbol: str,
        interval: str,
        start_ms: int | None = None,
        end_ms: int | None = None,
        limit: int = 500,
    ) -> list[Kline]:
        """Candles as Binance selects them; the last one is in progress up to now."""
        return self.kline_list(symbol, interval, start_ms, end_ms, limit)

    async def ticker_24h(self, symbol: str) -> Ticker24h:
        """Rolling 24 h statistics, consistent with the 1m klines over the same window."""
        path, instrument = self._path(symbol), self._instruments[symbol]
        now = self._clock()
        t0 = max((now - DAY_MS) // MINUTE_MS * MINUTE_MS, self.first_ms)
        bar = self._overlay(symbol, t0, now, path.summary(t0, now))
        row = self._kline(instrument, t0, now, bar)
        return Ticker24h(
            symbol=symbol,
            open_price=row.open,
            high_price=row.high,
            low_price=row.low,
            last_price=row.close,
            volume=row.volume,
            quote_volume=row.quote_volume,
            open_time=t0,
            close_time=now,
            count=row.trades,
            extra=ticker_extras(
                row.open, row.close, row.volume, row.quote_volume, instrument.tick_size
            ),
        )

    async def funding_history(
        self, symbol: str, start_ms: int | None, end_ms: int | None, limit: int
    ) -> list[FundingRecord]:
        """Settled funding events on the 00/08/16 UTC grid, oldest first (limit 1..1000)."""
        path, tick = self._path(symbol), self._instruments[symbol].tick_size
        if not 1 <= limit <= 1000:
            raise ValueError(f"limit must be between 1 and 1000, got {limit}")
        step = FUNDING_INTERVAL_MS
        first = -(-self.first_ms // step) * step
        last = self._clock() // step * step
        if end_ms is not None:
            last = min(last, end_ms // step * step)
        if start_ms is not None:
            times = list(range(max(first, -(-start_ms // step) * step), last + 1, step))[:limit]
        else:
            times = list(range(max(first, last - (limit - 1) * step), last + 1, step))
        records = []
        for t in times:
            mark = self._pin_at(symbol, t) or self._path_ticks(path, t)[1]
            records.append(FundingRecord(symbol, self.funding_rate(symbol, t), t, tick * mark))
        return records

    def status(self) -> dict[str, object]:
        """Connection-style health: a running simulation is always connected and fresh."""
        running = self._task is not None and not self._task.done()
        now = self._clock()
        quiet = None if self._last_update is None else now - self._last_update
        stale = not running or quiet is None or quiet > max(5 * self.tick_ms, 5000)
        pinned = ", ".join(sorted(self._pins)) or "none"
        detail = (
            f"simulated market: seed {self.seed}, {len(self._paths)} symbols, "
            f"tick {self.tick_ms} ms, pinned: {pinned}"
        )
        return feed_status(
            "sim",
            simulated=True,
            connected=running,
            last_update=self._last_update,
            stale=stale,
            detail=detail,
        )
