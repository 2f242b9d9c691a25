"""Shared instruments for the trading kernel tests."""

from decimal import Decimal

import pytest

from papertrade.trading.values import Bracket, Instrument

D = Decimal

# Binance BTCUSDT leverage brackets (cum chosen so maintenance is continuous across brackets).
BTC_BRACKETS = tuple(
    Bracket(i + 1, lev, D(floor), D(cap), D(ratio), D(cum))
    for i, (lev, floor, cap, ratio, cum) in enumerate(
        [
            (125, "0", "50000", "0.004", "0"),
            (100, "50000", "250000", "0.005", "50"),
            (50, "250000", "3000000", "0.01", "1300"),
            (20, "3000000", "15000000", "0.025", "46300"),
            (10, "15000000", "30000000", "0.05", "421300"),
            (5, "30000000", "80000000", "0.1", "1921300"),
            (4, "80000000", "100000000", "0.125", "3921300"),
            (3, "100000000", "200000000", "0.15", "6421300"),
            (2, "200000000", "300000000", "0.25", "26421300"),
            (1, "300000000", "500000000", "0.5", "101421300"),
        ]
    )
)

BTC = Instrument(
    symbol="BTCUSDT",
    base_asset="BTC",
    quote_asset="USDT",
    tick_size=D("0.10"),
    step_size=D("0.001"),
    min_qty=D("0.001"),
    max_qty=D("1000"),
    market_max_qty=D("120"),
    min_notional=D("100"),
    min_price=D("556.80"),
    max_price=D("4529764"),
    price_precision=2,
    quantity_precision=3,
    brackets=BTC_BRACKETS,
)


@pytest.fixture(scope="session")
def btc() -> Instrument:
    """BTCUSDT with Binance's real filters and brackets."""
    return BTC
