"""The simulated price path of one symbol: a pure function of (seed, symbol, time).

Three layers, each derived from hashes of (seed, symbol, index) so any moment can be computed
without replaying history:

1. the log price at every 00:00 UTC is a sum of smooth noise octaves (1 to 128 days), which
   keeps prices wandering around the reference price instead of drifting away;
2. inside a day, the minute closes are a random walk pinned to both midnights (a Brownian bridge);
3. inside a minute, five knots 10 s apart form a smaller bridge; between knots the path is linear.

Because the path is linear between knots, a minute's high and low are the extremes of its knots,
so candles computed here are exactly consistent with any tick sampled from `ticks_at`. The model
runs in floating point (it is a random model, not money); every value that leaves this module is
an integer number of ticks, and volumes an integer number of steps.
"""

import functools
import hashlib
import math
import random
from array import array
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR
from typing import NamedTuple

from papertrade.market.catalogue import SimProfile
from papertrade.trading.values import Instrument

MINUTE_MS = 60_000
DAY_MS = 86_400_000
MINUTES_PER_DAY = 1440
SEGMENTS = 6  # straight pieces per minute
SEGMENT_MS = MINUTE_MS // SEGMENTS
KNOTS = SEGMENTS - 1  # interior knots per minute
_SQRT3 = math.sqrt(3.0)  # scales a uniform(-1, 1) draw to unit variance
_OCTAVES = 7  # swings of up to 64 days
_DAY_CACHE = 8  # days of minute data kept per symbol (~200 kB each)
_SHARED_DAYS = 64  # days kept for the whole process, any symbol (_shared_day; 13 MB at most)
_CLOSES_CACHE = 64  # days of closes alone kept per symbol (~12 kB each)


class Bar(NamedTuple):
    """Price statistics in ticks; volume in steps; quote volume in steps × ticks."""

    open: int
    high: int
    low: int
    close: int
    volume: int
    quote_volume: int


def stable_int(*parts: object) -> int:
    """A 64-bit integer hash of the parts, identical on every run and platform."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def stable_unit(*parts: object) -> float:
    """A number in [-1, 1) from a stable hash of the parts."""
    return stable_int(*parts) / 2**63 - 1.0


@dataclass(frozen=True, slots=True)
class PathParams:
    """Everything the path of one symbol depends on."""

    seed: int
    symbol: str
    ref_log: float
    daily_vol: float
    inv_tick: float
    min_ticks: int
    max_ticks: int
    steps_per_minute: float  # mean traded volume per minute, in steps

    @classmethod
    def build(cls, seed: int, instrument: Instrument, profile: SimProfile) -> "PathParams":
        """Derive the parameters from an instrument and its simulation profile."""
        tick, step = instrument.tick_size, instrument.step_size
        per_minute = profile.quote_volume_24h / MINUTES_PER_DAY / profile.ref_price / step
        return cls(
            seed=seed,
            symbol=instrument.symbol,
            ref_log=math.log(float(profile.ref_price)),
            daily_vol=profile.daily_vol,
            inv_tick=float(1 / tick),
            min_ticks=max(1, int((instrument.min_price / tick).to_integral_value(ROUND_CEILING))),
            max_ticks=int((instrument.max_price / tick).to_integral_value(ROUND_FLOOR)),
            steps_per_minute=float(per_minute),
        )


def _day_random(params: PathParams, day: int) -> Callable[[], float]:
    return random.Random(stable_int(params.seed, params.symbol, "day", day)).random


def _closes(rnd: Callable[[], float], params: PathParams, x0: float, x1: float) -> "array[float]":
    """The day's log closes at each minute boundary (MINUTES_PER_DAY + 1 of them): the first
    draws of the day's random sequence, so they can be had without the minute bars."""
    n = MINUTES_PER_DAY
    sig_minute = params.daily_vol / math.sqrt(n) * _SQRT3
    walk = [0.0] * (n + 1)
    total = 0.0
    for i in range(1, n + 1):
        total += (rnd() * 2.0 - 1.0) * sig_minute
        walk[i] = total
    pull = (total - (x1 - x0)) / n  # bends the walk so it ends exactly at x1
    xs = array("d", (x0 + walk[i] - pull * i for i in range(n + 1)))
    xs[n] = x1  # exact, so this day's last close is the next day's first open
    return xs


class DayPath:
    """Minute data of one UTC day: closes, knots and per-minute OHLCV in ticks/steps."""

    __slots__ = ("c", "h", "knot_ticks", "knots", "l", "o", "quote", "vol", "xs")

    def __init__(self, params: PathParams, day: int, x0: float, x1: float) -> None:
        rnd = _day_random(params, day)
        n = MINUTES_PER_DAY
        sig_minute = params.daily_vol / math.sqrt(n) * _SQRT3
        xs = _closes(rnd, params, x0, x1)
        exp, lo_t, hi_t, inv = math.exp, params.min_ticks, params.max_ticks, params.inv_tick
        ticks = [min(max(round(exp(x) * inv), lo_t), hi_t) for x in xs]
        k = 2.0 * sig_minute / math.sqrt(SEGMENTS)  # (u - 0.5) * k has the segment's σ
        knots, knot_ticks = array("d"), array("q")
        o, h, lo, c, vol, quote = (array("q") for _ in range(6))
        mean_vol = params.steps_per_minute
        # Unrolled for the five knots (SEGMENTS == 6): this loop is the cost of a day.
        for i in range(n):
            a, b = xs[i], xs[i + 1]
            s1 = (rnd() - 0.5) * k
            s2 = s1 + (rnd() - 0.5) * k
            s3 = s2 + (rnd() - 0.5) * k
            s4 = s3 + (rnd() - 0.5) * k
            s5 = s4 + (rnd() - 0.5) * k
            bend = (s5 + (rnd() - 0.5) * k - (b - a)) / SEGMENTS
            row = (
                a + s1 - bend,
                a + s2 - 2 * bend,
                a + s3 - 3 * bend,
                a + s4 - 4 * bend,
                a + s5 - 5 * bend,
            )
            marks = [round(exp(x) * inv) for x in row]
            ta, tb = ticks[i], ticks[i + 1]
            high, low = max(ta, tb, *marks), min(ta, tb, *marks)
            if low < lo_t or high > hi_t:  # rare: the path touched the price filter's bounds
                marks = [min(max(t, lo_t), hi_t) for t in marks]
                high, low = min(high, hi_t), max(low, lo_t)
            knots.extend(row)
            knot_ticks.extend(marks)
            # Busier minutes when the price moves more, as in real markets.
            units = int(mean_vol * (0.3 + 1.4 * rnd()) * (1.0 + 400.0 * abs(b - a)))
            o.append(ta)
            h.append(high)
            lo.append(low)
            c.append(tb)
            vol.append(units)
            quote.append(units * tb)
        self.xs, self.knots, self.knot_ticks = xs, knots, knot_ticks
        self.o, self.h, self.l, self.c, self.vol, self.quote = o, h, lo, c, vol, quote

    def bar(self) -> Bar:
        """The whole day as one bar."""
        return Bar(self.o[0], max(self.h), min(self.l), self.c[-1], sum(self.vol), sum(self.quote))


@functools.lru_cache(maxsize=_SHARED_DAYS)
def _shared_day(params: PathParams, day: int, x0: float, x1: float) -> DayPath:
    """A day's minute data, shared by every path of a process with the same parameters: the
    service has one feed, but a test process starts hundreds of apps, and each day of 26
    symbols took 0.4 s of CPU to compute again. A DayPath is never changed once made."""
    return DayPath(params, day, x0, x1)


class PricePath:
    """The deterministic path of one symbol, with caches for days already computed."""

    def __init__(self, params: PathParams) -> None:
        self.params = params
        self._bounds: dict[int, float] = {}
        self._days: OrderedDict[int, DayPath] = OrderedDict()
        self._day_bars: dict[int, Bar] = {}
        self._closes: OrderedDict[int, array[float]] = OrderedDict()

    def boundary(self, day: int) -> float:
        """Log price at 00:00 UTC of `day` (days since the epoch)."""
        cached = self._bounds.get(day)
        if cached is not None:
            return cached
        p = self.params
        total = p.ref_log
        for k in range(_OCTAVES):
            span = 1 << k
            j, r = divmod(day, span)
            a = stable_unit(p.seed, p.symbol, k, j)
            b = stable_unit(p.seed, p.symbol, k, j + 1)
            # Amplitude ∝ sqrt(span) mimics Brownian scaling; 0.5 keeps the daily σ near daily_vol.
            total += 0.5 * p.daily_vol * math.sqrt(span) * _SQRT3 * (a + (b - a) * r / span)
        self._bounds[day] = total
        return total

    def day(self, day: int) -> DayPath:
        """Minute data of one day (computed once, then cached)."""
        found = self._days.get(day)
        if found is not None:
            self._days.move_to_end(day)
            return found
        made = _shared_day(self.params, day, self.boundary(day), self.boundary(day + 1))
        self._days[day] = made
        self._day_bars.setdefault(day, made.bar())
        if len(self._days) > _DAY_CACHE:
            self._days.popitem(last=False)
        return made

    def day_bar(self, day: int) -> Bar:
        """A whole day as one bar (kept for good: a few ints per day)."""
        found = self._day_bars.get(day)
        return found if found is not None else self.day(day).bar()

    def to_ticks(self, x: float) -> int:
        """Ticks of a log price, clamped to the instrument's price filter."""
        p = self.params
        return min(max(round(math.exp(x) * p.inv_tick), p.min_ticks), p.max_ticks)

    def log_at(self, t_ms: int) -> float:
        """Log price at any ms (linear between knots)."""
        minute, r = divmod(t_ms, MINUTE_MS)
        day, i = divmod(minute, MINUTES_PER_DAY)
        if r == 0 and day not in self._days:
            return self._minute_closes(day)[i]  # a boundary: no minute bars needed
        path = self.day(day)
        seg, into = divmod(r, SEGMENT_MS)
        a = path.xs[i] if seg == 0 else path.knots[i * KNOTS + seg - 1]
        b = path.xs[i + 1] if seg == KNOTS else path.knots[i * KNOTS + seg]
        x = a + (b - a) * into / SEGMENT_MS
        # Clamp float round-off so a sample never leaves the segment it lies on.
        return min(max(x, min(a, b)), max(a, b))

    def _minute_closes(self, day: int) -> "array[float]":
        """A day's closes alone (funding times across years of history ask only for these:
        about a thirtieth of the cost of the day's minute bars)."""
        found = self._closes.get(day)
        if found is None:
            bounds = self.boundary(day), self.boundary(day + 1)
            found = _closes(_day_random(self.params, day), self.params, *bounds)
            self._closes[day] = found
            if len(self._closes) > _CLOSES_CACHE:
                self._closes.popitem(last=False)
        return found

    def ticks_at(self, t_ms: int) -> int:
        """Last price in ticks at any ms."""
        return self.to_ticks(self.log_at(t_ms))

    def summary(self, t0: int, t1: int) -> Bar:
        """Open/high/low/close/volume of the path over [t0, t1]; t0 on a minute boundary."""
        first_day, first_minute = divmod(t0 // MINUTE_MS, MINUTES_PER_DAY)
        known = self._day_bars.get(first_day) if first_minute == 0 else None
        # t0 is a minute boundary; a midnight open is in the day bar kept for good.
        opened = known.open if known is not None else self.day(first_day).o[first_minute]
        high = low = close = opened
        volume = quote = 0
        m, m_end = t0 // MINUTE_MS, t1 // MINUTE_MS
        while m < m_end:
            day, i = divmod(m, MINUTES_PER_DAY)
            if i == 0 and m + MINUTES_PER_DAY <= m_end:
                bar = self.day_bar(day)
                m += MINUTES_PER_DAY
            else:
                j = min(MINUTES_PER_DAY, i + m_end - m)
                p = self.day(day)
                bar = Bar(
                    p.o[i],
                    max(p.h[i:j]),
                    min(p.l[i:j]),
                    p.c[j - 1],
                    sum(p.vol[i:j]),
                    sum(p.quote[i:j]),
                )
                m += j - i
            high, low, close = max(high, bar.high), min(low, bar.low), bar.close
            volume += bar.volume
            quote += bar.quote_volume
        into = t1 - m_end * MINUTE_MS
        if into > 0:
            day, i = divmod(m_end, MINUTES_PER_DAY)
            p = self.day(day)
            close = self.ticks_at(t1)
            passed = p.knot_ticks[i * KNOTS : i * KNOTS + min(KNOTS, into // SEGMENT_MS)]
            high = max(high, p.o[i], close, *passed)
            low = min(low, p.o[i], close, *passed)
            part = p.vol[i] * into // MINUTE_MS
            volume += part
            quote += part * close
        return Bar(opened, high, low, close, volume, quote)
