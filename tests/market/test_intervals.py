"""Candle boundaries and Binance's kline window rules."""

from datetime import UTC, datetime

import pytest

from papertrade.market.intervals import candle_open, candle_opens, next_open


def ms(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> int:
    return int(datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp() * 1000)


def test_boundaries() -> None:
    t = ms(2025, 3, 12, 13, 47, 31)
    assert candle_open("1m", t) == ms(2025, 3, 12, 13, 47)
    assert candle_open("15m", t) == ms(2025, 3, 12, 13, 45)
    assert candle_open("4h", t) == ms(2025, 3, 12, 12)
    assert candle_open("1d", t) == ms(2025, 3, 12)
    assert candle_open("1w", t) == ms(2025, 3, 10)  # a Monday
    assert candle_open("1M", t) == ms(2025, 3, 1)
    assert next_open("1M", ms(2025, 12, 1)) == ms(2026, 1, 1)
    assert next_open("1M", ms(2025, 2, 1)) == ms(2025, 3, 1)
    assert next_open("1h", ms(2025, 3, 12, 13)) == ms(2025, 3, 12, 14)


def test_window_rules() -> None:
    now = ms(2025, 3, 12, 13, 47, 31)
    first = ms(2025, 3, 1)
    newest = candle_opens("1h", start_ms=None, end_ms=None, limit=3, first_ms=first, now_ms=now)
    assert newest == [ms(2025, 3, 12, 11), ms(2025, 3, 12, 12), ms(2025, 3, 12, 13)]
    # startTime inside a candle: the first candle opens at or after it.
    forward = candle_opens(
        "1h", start_ms=ms(2025, 3, 12, 10, 30), end_ms=None, limit=10, first_ms=first, now_ms=now
    )
    assert forward == [ms(2025, 3, 12, h) for h in (11, 12, 13)]
    # endTime inside a candle: that candle is the last one.
    back = candle_opens(
        "1h", start_ms=None, end_ms=ms(2025, 3, 12, 9, 5), limit=2, first_ms=first, now_ms=now
    )
    assert back == [ms(2025, 3, 12, 8), ms(2025, 3, 12, 9)]
    # Nothing before the data starts, nothing after now.
    early = candle_opens("1d", start_ms=0, end_ms=None, limit=3, first_ms=first, now_ms=now)
    assert early == [ms(2025, 3, 1), ms(2025, 3, 2), ms(2025, 3, 3)]
    late = candle_opens(
        "1m", start_ms=now + 60_000, end_ms=None, limit=5, first_ms=first, now_ms=now
    )
    assert late == []


def test_limits_and_names_are_checked() -> None:
    with pytest.raises(ValueError, match="limit"):
        candle_opens("1m", start_ms=None, end_ms=None, limit=1501, first_ms=0, now_ms=10**12)
    with pytest.raises(ValueError, match="interval"):
        candle_open("2m", 0)
