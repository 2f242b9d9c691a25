"""Recorded market data for the replay feed: one CSV file per symbol (see docs/market.md)."""

import csv
from bisect import bisect_right
from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal, InvalidOperation
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from papertrade.kit.decimals import D
from papertrade.market.catalogue import get_instrument, make_instrument
from papertrade.trading.values import Instrument

CANDLE_COLUMNS = ("open_time", "open", "high", "low", "close", "volume")
TICK_COLUMNS = ("time", "price")  # optional: mark_price, funding_rate
TICK_CANDLE_MS = 60_000  # tick files are summarised into 1m candles


class Point(NamedTuple):
    """One price on the replayed path (data time, ms)."""

    time: int
    price: Decimal
    mark: Decimal | None = None
    funding: Decimal | None = None


class Candle(NamedTuple):
    """One base candle of the recording."""

    open_time: int
    open: Decimal
    high: Decimal
    low: Decimal
    close: Decimal
    volume: Decimal


@dataclass
class Tape:
    """Everything recorded for one symbol, in data time."""

    symbol: str
    base_ms: int  # length of one base candle
    candles: list[Candle]
    points: list[Point]
    interpolate: bool  # candle files: straight lines between the intra-candle points
    instrument: Instrument
    point_times: list[int] = field(default_factory=list)
    candle_times: list[int] = field(default_factory=list)
    has_funding: bool = False

    def __post_init__(self) -> None:
        self.point_times = [p.time for p in self.points]
        self.candle_times = [c.open_time for c in self.candles]
        self.has_funding = any(p.funding is not None for p in self.points)

    def price_at(self, t: int) -> Decimal | None:
        """The replayed price at data time t (None before the first point)."""
        i = bisect_right(self.point_times, t) - 1
        if i < 0:
            return None
        here = self.points[i]
        if not self.interpolate or i + 1 >= len(self.points) or here.time == t:
            return here.price
        after = self.points[i + 1]
        share = Decimal(t - here.time) / Decimal(after.time - here.time)
        raw = here.price + (after.price - here.price) * share
        tick = self.instrument.tick_size
        price = (raw / tick).to_integral_value(ROUND_HALF_EVEN) * tick
        # Rounding must not step outside the segment (recorded prices may be off the grid).
        return min(max(price, min(here.price, after.price)), max(here.price, after.price))

    def funding_at(self, t: int) -> Decimal | None:
        """The last recorded funding rate at or before data time t."""
        i = bisect_right(self.point_times, t) - 1
        while self.has_funding and i >= 0:
            rate = self.points[i].funding
            if rate is not None:
                return rate
            i -= 1
        return None

    def last_point(self, t: int) -> Point | None:
        """The last recorded point at or before data time t."""
        i = bisect_right(self.point_times, t) - 1
        return self.points[i] if i >= 0 else None


def _places(values: list[str]) -> int:
    exponents = [Decimal(v).as_tuple().exponent for v in values]
    return max([0, *(-e for e in exponents if isinstance(e, int))])


def _instrument(symbol: str, prices: list[str], volumes: list[str]) -> Instrument:
    known = get_instrument(symbol)
    if known is not None:
        return known
    # Unknown symbols: the grid is as fine as the recording's own decimals.
    step = Decimal(1).scaleb(-_places(volumes)) if volumes else Decimal("0.001")
    return make_instrument(symbol, Decimal(1).scaleb(-_places(prices)), step)


def _candle_points(candles: list[Candle], base_ms: int) -> list[Point]:
    """open → first extreme → second extreme → close inside each candle.

    A rising candle dips to its low before making its high, a falling one the reverse: the
    path that travels least, and the one most recordings suggest.
    """
    points: list[Point] = []
    for c in candles:
        first, second = (c.low, c.high) if c.close >= c.open else (c.high, c.low)
        t = c.open_time
        points += [
            Point(t, c.open),
            Point(t + base_ms // 3, first),
            Point(t + 2 * base_ms // 3, second),
            Point(t + base_ms - 1, c.close),
        ]
    return points


def _load_candles(file: Path, symbol: str, rows: list[dict[str, str]]) -> Tape:
    candles: list[Candle] = []
    for line, row in enumerate(rows, start=2):
        try:
            c = Candle(int(row["open_time"]), *(D(row[k]) for k in CANDLE_COLUMNS[1:]))
        except (KeyError, TypeError, ValueError, InvalidOperation) as exc:
            raise ValueError(f"{file}:{line}: bad candle row ({exc})") from exc
        if not c.low <= min(c.open, c.close) <= max(c.open, c.close) <= c.high:
            raise ValueError(f"{file}:{line}: high/low do not contain open/close")
        if candles and c.open_time <= candles[-1].open_time:
            raise ValueError(f"{file}:{line}: open_time is not increasing")
        candles.append(c)
    gaps = [b.open_time - a.open_time for a, b in pairwise(candles)]
    base = min(gaps) if gaps else 60_000
    prices = [row[k] for row in rows for k in ("open", "high", "low", "close")]
    instrument = _instrument(symbol, prices, [row["volume"] for row in rows])
    return Tape(symbol, base, candles, _candle_points(candles, base), True, instrument)


def _optional(row: dict[str, str], key: str) -> Decimal | None:
    value = (row.get(key) or "").strip()
    return D(value) if value else None


def _load_ticks(file: Path, symbol: str, rows: list[dict[str, str]]) -> Tape:
    points: list[Point] = []
    for line, row in enumerate(rows, start=2):
        try:
            p = Point(
                int(row["time"]),
                D(row["price"]),
                _optional(row, "mark_price"),
                _optional(row, "funding_rate"),
            )
        except (KeyError, TypeError, ValueError, InvalidOperation) as exc:
            raise ValueError(f"{file}:{line}: bad tick row ({exc})") from exc
        if points and p.time < points[-1].time:
            raise ValueError(f"{file}:{line}: time goes backwards")
        points.append(p)
    candles: list[Candle] = []
    for p in points:
        start = p.time // TICK_CANDLE_MS * TICK_CANDLE_MS
        if candles and candles[-1].open_time == start:
            last = candles[-1]
            candles[-1] = last._replace(
                high=max(last.high, p.price), low=min(last.low, p.price), close=p.price
            )
        else:
            candles.append(Candle(start, p.price, p.price, p.price, p.price, Decimal(0)))
    instrument = _instrument(symbol, [row["price"] for row in rows], [])
    return Tape(symbol, TICK_CANDLE_MS, candles, points, False, instrument)


def load_tape(file: Path) -> Tape:
    """One symbol's recording; the symbol is the file name (BTCUSDT.csv)."""
    symbol = file.stem.upper()
    with file.open(newline="") as handle:
        reader = csv.DictReader(handle)
        columns = tuple(name.strip() for name in reader.fieldnames or ())
        reader.fieldnames = list(columns)
        rows = list(reader)
    if not rows:
        raise ValueError(f"{file}: no data rows")
    if columns[: len(CANDLE_COLUMNS)] == CANDLE_COLUMNS:
        return _load_candles(file, symbol, rows)
    if columns[: len(TICK_COLUMNS)] == TICK_COLUMNS:
        return _load_ticks(file, symbol, rows)
    raise ValueError(
        f"{file}: header must start with {','.join(CANDLE_COLUMNS)} or {','.join(TICK_COLUMNS)}"
    )


def load_tapes(path: Path) -> dict[str, Tape]:
    """Every <SYMBOL>.csv in a directory (or the single file `path`)."""
    files = sorted(path.glob("*.csv")) if path.is_dir() else [path]
    if not files or not all(f.is_file() for f in files):
        raise FileNotFoundError(f"no replay CSV files at {path}")
    tapes = [load_tape(f) for f in files]
    return {t.symbol: t for t in tapes}
