"""Funding payment signs and the 8-hour grid."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from papertrade.trading.funding import funding_payment, funding_times_between, next_funding_time

D = Decimal


def ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize(
    ("qty", "mark", "rate", "credited"),
    [
        ("1", "60000", "0.0001", "-6"),  # positive rate: the long pays
        ("-1", "60000", "0.0001", "6"),  # ...and the short receives
        ("1", "60000", "-0.0001", "6"),  # negative rate: the long receives
        ("-1", "60000", "-0.0001", "-6"),  # ...and the short pays
        ("0.5", "3000", "0.00025", "-0.375"),
        ("0", "60000", "0.0001", "0"),
        ("-1", "60000", "0", "0"),
    ],
)
def test_funding_payment(qty: str, mark: str, rate: str, credited: str) -> None:
    result = funding_payment(D(qty), D(mark), D(rate))
    assert result == D(credited)
    assert not (result == 0 and result.is_signed())


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        ("2024-03-01 00:00:00", "2024-03-01 08:00:00"),  # exactly on the grid: that one is past
        ("2024-03-01 00:00:00.001", "2024-03-01 08:00:00"),
        ("2024-03-01 07:59:59.999", "2024-03-01 08:00:00"),
        ("2024-03-01 08:00:00", "2024-03-01 16:00:00"),
        ("2024-03-01 12:34:56", "2024-03-01 16:00:00"),
        ("2024-03-01 16:00:00.5", "2024-03-02 00:00:00"),
        ("2024-02-29 23:59:59", "2024-03-01 00:00:00"),
    ],
)
def test_next_funding_time(now: str, expected: str) -> None:
    assert next_funding_time(ms(now)) == ms(expected)


def test_funding_times_between() -> None:
    start, end = ms("2024-03-01 07:00:00"), ms("2024-03-02 00:00:00")
    assert funding_times_between(start, end) == [
        ms("2024-03-01 08:00:00"),
        ms("2024-03-01 16:00:00"),
        ms("2024-03-02 00:00:00"),
    ]
    assert funding_times_between(start, ms("2024-03-01 07:59:59")) == []
    assert funding_times_between(ms("2024-03-01 08:00:00"), ms("2024-03-01 08:00:00")) == []
