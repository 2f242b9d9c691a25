"""Maker/taker commission."""

from decimal import Decimal

import pytest

from papertrade.trading.enums import Liquidity
from papertrade.trading.fees import FeeSchedule

D = Decimal


@pytest.mark.parametrize(
    ("notional", "liquidity", "expected"),
    [
        ("10000", Liquidity.MAKER, "2"),
        ("10000", Liquidity.TAKER, "5"),
        ("-10000", Liquidity.TAKER, "5"),  # a sell's signed notional still pays a positive fee
        ("123.45", Liquidity.TAKER, "0.061725"),
        ("0", Liquidity.MAKER, "0"),
    ],
)
def test_default_commission(notional: str, liquidity: Liquidity, expected: str) -> None:
    assert FeeSchedule().commission(D(notional), liquidity) == D(expected)


def test_custom_rates() -> None:
    fees = FeeSchedule(maker_rate=D("-0.0001"), taker_rate=D("0.0004"))
    assert fees.rate(Liquidity.MAKER) == D("-0.0001")
    assert fees.commission(D(1000), Liquidity.MAKER) == D("-0.1")  # a rebate
    assert fees.commission(D(1000), Liquidity.TAKER) == D("0.4")


def test_defaults_are_binance_vip0() -> None:
    assert FeeSchedule() == FeeSchedule(D("0.0002"), D("0.0005"))
