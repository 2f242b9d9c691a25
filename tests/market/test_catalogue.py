"""The built-in catalogue: real filters, consistent brackets, sane simulation profiles."""

from decimal import Decimal
from itertools import pairwise

import pytest

from papertrade.market.catalogue import (
    DEFAULT_BRACKETS,
    brackets_for,
    build_brackets,
    catalogue,
    get_instrument,
    make_instrument,
    sim_profile,
)
from papertrade.trading.values import Bracket

REQUIRED = [
    f"{base}USDT"
    for base in [
        "BTC",
        "ETH",
        "BNB",
        "SOL",
        "XRP",
        "DOGE",
        "ADA",
        "AVAX",
        "LINK",
        "DOT",
        "LTC",
        "TRX",
        "BCH",
        "ATOM",
        "NEAR",
        "FIL",
        "APT",
        "ARB",
        "OP",
        "SUI",
        "ETC",
        "UNI",
        "AAVE",
        "1000PEPE",
    ]
]


def _places(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    return -exponent


def assert_consistent(brackets: tuple[Bracket, ...]) -> None:
    """Binance's rule: cum(n) = cum(n-1) + floor(n) * (mmr(n) - mmr(n-1)), floors chained."""
    assert brackets[0].notional_floor == 0
    assert brackets[0].cum == 0
    for prev, row in pairwise(brackets):
        assert row.bracket == prev.bracket + 1
        assert row.notional_floor == prev.notional_cap
        assert row.notional_cap > row.notional_floor
        assert row.maint_margin_ratio > prev.maint_margin_ratio
        assert row.initial_leverage < prev.initial_leverage
        expected = prev.cum + row.notional_floor * (
            row.maint_margin_ratio - prev.maint_margin_ratio
        )
        assert row.cum == expected
        # Maintenance margin is continuous where one bracket hands over to the next.
        edge = row.notional_floor
        assert edge * prev.maint_margin_ratio - prev.cum == edge * row.maint_margin_ratio - row.cum


def test_catalogue_lists_the_required_symbols() -> None:
    instruments = catalogue()
    assert len(instruments) >= 24
    assert set(REQUIRED) <= set(instruments)
    for symbol, instrument in instruments.items():
        assert instrument.symbol == symbol
        assert symbol == instrument.base_asset + "USDT"
        assert instrument.quote_asset == "USDT"


@pytest.mark.parametrize("symbol", sorted(catalogue()))
def test_filters_hang_together(symbol: str) -> None:
    i = catalogue()[symbol]
    assert i.price_precision == _places(i.tick_size)  # Binance writes tickSize to that precision
    assert i.quantity_precision == _places(i.step_size)
    assert i.min_qty % i.step_size == 0
    assert i.max_qty % i.step_size == 0
    assert i.min_qty <= i.market_max_qty <= i.max_qty
    assert i.min_price % i.tick_size == 0  # the price grid starts at min price
    assert 0 < i.min_price < i.max_price
    assert i.min_notional in (Decimal(5), Decimal(20), Decimal(100))
    assert len(i.brackets) >= 5
    assert_consistent(i.brackets)
    profile = sim_profile(symbol)
    assert i.min_price < profile.ref_price < i.max_price
    assert 0.01 <= profile.daily_vol <= 0.1


def test_real_values_spot_checks() -> None:
    btc = catalogue()["BTCUSDT"]
    assert (btc.tick_size, btc.step_size, btc.min_notional) == (
        Decimal("0.10"),
        Decimal("0.001"),
        Decimal(100),
    )
    assert (btc.max_qty, btc.market_max_qty) == (Decimal(1000), Decimal(120))
    assert btc.max_leverage == 125
    # Binance's published maintenance amounts.
    assert [b.cum for b in btc.brackets[:5]] == [0, 50, 950, 11450, 131450]
    assert btc.bracket_for(Decimal(60_000)).maint_margin_ratio == Decimal("0.005")
    pepe = catalogue()["1000PEPEUSDT"]
    assert (pepe.tick_size, pepe.step_size, pepe.price_precision) == (
        Decimal("0.0000001"),
        Decimal(1),
        7,
    )
    assert catalogue()["BNBUSDT"].brackets[2].cum == Decimal(210)


def test_unknown_symbols_get_a_default_ladder() -> None:
    assert get_instrument("FOOUSDT") is None
    assert brackets_for("FOOUSDT") == DEFAULT_BRACKETS
    assert brackets_for("ETHUSDT") == catalogue()["ETHUSDT"].brackets
    assert_consistent(DEFAULT_BRACKETS)
    made = make_instrument("FOOUSDT", Decimal("0.0001"), Decimal("0.1"))
    assert (made.base_asset, made.price_precision, made.quantity_precision) == ("FOO", 4, 1)
    assert made.brackets == DEFAULT_BRACKETS


def test_build_brackets_derives_cum() -> None:
    rows = build_brackets("10:1000:0.01 5:5000:0.05")
    assert rows[1] == Bracket(2, 5, Decimal(1000), Decimal(5000), Decimal("0.05"), Decimal(40))
