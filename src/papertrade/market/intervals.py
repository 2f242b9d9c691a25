"""Kline interval arithmetic: candle boundaries and Binance's window selection rules."""

from datetime import UTC, datetime

from papertrade.market.feed import INTERVALS_MS

MAX_KLINES = 1500  # Binance's cap on `limit`
_WEEK_OFFSET_MS = 4 * 86_400_000  # the epoch was a Thursday; weekly candles open on Mondays


def interval_ms(interval: str) -> int:
    """Nominal length of an interval in ms (ValueError for names Binance does not use)."""
    try:
        return INTERVALS_MS[interval]
    except KeyError:
        raise ValueError(f"invalid interval {interval!r}") from None


def check_limit(limit: int) -> int:
    """The limit itself when 1..1500, else ValueError (Binance rejects the request too)."""
    if not 1 <= limit <= MAX_KLINES:
        raise ValueError(f"limit must be between 1 and {MAX_KLINES}, got {limit}")
    return limit


def candle_open(interval: str, t_ms: int) -> int:
    """Open time of the candle that contains `t_ms` (calendar months for 1M, Mondays for 1w)."""
    if interval == "1M":
        moment = datetime.fromtimestamp(t_ms / 1000, tz=UTC)
        return int(datetime(moment.year, moment.month, 1, tzinfo=UTC).timestamp()) * 1000
    step = interval_ms(interval)
    offset = _WEEK_OFFSET_MS if interval == "1w" else 0
    return (t_ms - offset) // step * step + offset


def next_open(interval: str, open_ms: int) -> int:
    """Open time of the candle after the one opening at `open_ms`."""
    if interval == "1M":
        moment = datetime.fromtimestamp(open_ms / 1000, tz=UTC)
        year, month = (
            (moment.year + 1, 1) if moment.month == 12 else (moment.year, moment.month + 1)
        )
        return int(datetime(year, month, 1, tzinfo=UTC).timestamp()) * 1000
    return open_ms + interval_ms(interval)


def candle_opens(
    interval: str,
    *,
    start_ms: int | None,
    end_ms: int | None,
    limit: int,
    first_ms: int,
    now_ms: int,
) -> list[int]:
    """Open times of the candles Binance would return, oldest first.

    startTime selects candles opening at or after it, endTime those opening at or before it; with
    no startTime the newest `limit` candles are returned. Candles opening before `first_ms` (where
    the data begins) or after the one containing `now_ms` do not exist.
    """
    check_limit(limit)
    lowest = candle_open(interval, first_ms)
    if lowest < first_ms:
        lowest = next_open(interval, lowest)
    highest = candle_open(interval, now_ms)
    if end_ms is not None:
        highest = min(highest, candle_open(interval, end_ms))
    opens: list[int] = []
    if start_ms is not None:
        t = candle_open(interval, start_ms)
        if t < start_ms:
            t = next_open(interval, t)
        t = max(t, lowest)
        while t <= highest and len(opens) < limit:
            opens.append(t)
            t = next_open(interval, t)
        return opens
    t = highest
    while t >= lowest and len(opens) < limit:
        opens.append(t)
        t = candle_open(interval, t - 1)
    opens.reverse()
    return opens
