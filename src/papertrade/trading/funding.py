"""Funding payments on the 8-hourly Binance grid (00:00, 08:00, 16:00 UTC)."""

from decimal import Decimal

FUNDING_INTERVAL_MS = 8 * 60 * 60 * 1000  # the epoch is midnight UTC, so multiples hit the grid


def funding_payment(qty: Decimal, mark: Decimal, rate: Decimal) -> Decimal:
    """Signed amount credited to the wallet: a positive rate makes longs pay and shorts receive."""
    # Subtracting from zero (rather than negating) never yields Decimal("-0").
    return Decimal(0) - qty * mark * rate


def next_funding_time(now_ms: int) -> int:
    """The first funding time strictly after `now_ms` (a settlement at exactly now is past)."""
    return (now_ms // FUNDING_INTERVAL_MS + 1) * FUNDING_INTERVAL_MS


def funding_times_between(after_ms: int, until_ms: int) -> list[int]:
    """Funding times t with after_ms < t <= until_ms, oldest first (to catch up after downtime)."""
    first = next_funding_time(after_ms)
    return list(range(first, until_ms + 1, FUNDING_INTERVAL_MS))
