"""Time helpers: aware UTC and milliseconds since the epoch."""

import time
from datetime import UTC, datetime


def now_ms() -> int:
    """Current time in milliseconds since the UNIX epoch."""
    return time.time_ns() // 1_000_000


def utc_now() -> datetime:
    """Current aware UTC datetime."""
    return datetime.now(UTC)


def to_ms(moment: datetime) -> int:
    """Milliseconds since the epoch of an aware (or UTC-naive) datetime."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def from_ms(ms: int) -> datetime:
    """Aware UTC datetime from milliseconds since the epoch."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC)
