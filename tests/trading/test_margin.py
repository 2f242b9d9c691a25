"""Initial/maintenance margin, open-order margin, account summary, liquidation price."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from papertrade.trading.book import RestingOrder
from papertrade.trading.enums import Side
from papertrade.trading.errors import InsufficientMargin, InvalidLeverage, MaxPositionExceeded
from papertrade.trading.margin import (
    AccountState,
    PositionInput,
    account_state,
    check_leverage,
    ensure_margin,
    initial_margin,
    liquidation_price,
    liquidation_prices,
    maintenance_margin,
    max_notional_for_leverage,
    open_order_margin,
)
from papertrade.trading.values import Bracket, Instrument

D = Decimal
BUY, SELL = Side.BUY, Side.SELL


@pytest.mark.parametrize(
    ("notional", "leverage", "expected"),
    [("1000", 10, "100"), ("-1000", 10, "100"), ("60000", 125, "480"), ("5", 1, "5")],
)
def test_initial_margin(notional: str, leverage: int, expected: str) -> None:
    assert initial_margin(D(notional), leverage) == D(expected)


def test_initial_margin_rejects_leverage_below_one() -> None:
    with pytest.raises(InvalidLeverage):
        initial_margin(D(100), 0)


@pytest.mark.parametrize(
    ("notional", "expected"),
    [
        ("0", "0"),
        ("10000", "40"),  # bracket 1: 0.4 %, cum 0
        ("49999", "199.996"),
        ("50000", "200"),  # bracket 2 starts at its floor: 0.5 % − 50
        ("100000", "450"),
        ("1000000", "8700"),  # bracket 3: 1 % − 1300
        ("20000000", "578700"),  # bracket 5: 5 % − 421300
        ("600000000", "198578700"),  # beyond the last cap: the last bracket still applies
    ],
)
def test_maintenance_margin_via_brackets(btc: Instrument, notional: str, expected: str) -> None:
    assert maintenance_margin(btc, D(notional)) == D(expected)


def test_maintenance_margin_is_continuous_at_every_bracket_floor(btc: Instrument) -> None:
    for bracket in btc.brackets[1:]:
        below = maintenance_margin(btc, bracket.notional_floor - D("0.000001"))
        at = maintenance_margin(btc, bracket.notional_floor)
        assert abs(at - below) < D("0.000001")


def test_maintenance_margin_needs_brackets(btc: Instrument) -> None:
    bare = Instrument(**{**{f: getattr(btc, f) for f in btc.__slots__}, "brackets": ()})
    with pytest.raises(ValueError, match="brackets"):
        maintenance_margin(bare, D(100))


@pytest.mark.parametrize(
    ("leverage", "cap"), [(125, "50000"), (100, "250000"), (21, "3000000"), (20, "15000000"),
                          (1, "500000000")]
)  # fmt: skip
def test_max_notional_for_leverage(btc: Instrument, leverage: int, cap: str) -> None:
    assert max_notional_for_leverage(btc, leverage) == D(cap)


@pytest.mark.parametrize("leverage", [0, -1, 126])
def test_leverage_out_of_range(btc: Instrument, leverage: int) -> None:
    with pytest.raises(InvalidLeverage) as info:
        check_leverage(btc, leverage)
    assert info.value.code == "invalid_leverage"
    with pytest.raises(InvalidLeverage):
        max_notional_for_leverage(btc, leverage)


def test_check_leverage_caps_the_position(btc: Instrument) -> None:
    check_leverage(btc, 20, D("15000000"))
    check_leverage(btc, 125, D("-50000"))
    with pytest.raises(MaxPositionExceeded):
        check_leverage(btc, 20, D("15000000.01"))
    with pytest.raises(MaxPositionExceeded):
        check_leverage(btc, 125, D("-50001"))


def _order(side: Side, price: str, qty: str, order_id: int = 0) -> RestingOrder:
    return RestingOrder(order_id, 1, side, D(price), D(qty), order_id)


@pytest.mark.parametrize(
    ("position", "orders", "expected"),
    [
        pytest.param("0", [], "0", id="nothing"),
        pytest.param("0", [(BUY, "100", "1")], "10", id="flat-buy"),
        pytest.param("0", [(BUY, "100", "1"), (BUY, "90", "2")], "28", id="flat-buys-add-up"),
        pytest.param("0", [(BUY, "100", "1"), (SELL, "110", "1")], "11", id="larger-side-only"),
        pytest.param("1", [(SELL, "110", "1")], "0", id="sell-closing-long-is-free"),
        pytest.param("1", [(SELL, "110", "3")], "22", id="sell-beyond-long"),
        pytest.param(
            "1", [(SELL, "120", "1"), (SELL, "110", "1")], "12", id="lowest-sell-closes-first"
        ),
        pytest.param(
            "-2", [(BUY, "90", "2"), (BUY, "100", "1")], "9", id="highest-buy-closes-first"
        ),
        pytest.param("-2", [(BUY, "100", "1"), (SELL, "110", "1")], "11", id="short-plus-sell"),
        pytest.param("0.5", [(SELL, "100", "1")], "5", id="partial-offset"),
        pytest.param("1", [(BUY, "100", "1")], "10", id="buy-adding-to-long"),
    ],
)
def test_open_order_margin(
    position: str, orders: list[tuple[Side, str, str]], expected: str
) -> None:
    resting = [_order(side, price, qty, i) for i, (side, price, qty) in enumerate(orders)]
    assert open_order_margin(D(position), resting, 10) == D(expected)


def test_ensure_margin() -> None:
    ensure_margin(D(100), D(100))
    with pytest.raises(InsufficientMargin) as info:
        ensure_margin(D("100.01"), D(100))
    assert info.value.code == "insufficient_margin"


def test_account_state_healthy(btc: Instrument) -> None:
    position = PositionInput(btc, D(1), D(60000), D(62000), 10)
    state = account_state(D(10000), [position], D(500))
    assert state == AccountState(
        wallet_balance=D(10000),
        unrealized_pnl=D(2000),
        equity=D(12000),
        position_initial_margin=D(6200),
        maintenance_margin=D(260),  # 62000 × 0.5 % − 50
        open_order_margin=D(500),
        available_balance_raw=D(5300),
        cross_wallet_balance=D(10000),
        cross_unrealized_pnl=D(2000),
        cross_maintenance_margin=D(260),
    )
    assert state.available_balance == D(5300)
    assert not state.is_liquidatable
    assert state.margin_ratio == D(260) / D(12000)


def test_account_state_underwater(btc: Instrument) -> None:
    positions = [
        PositionInput(btc, D(1), D(60000), D(59950), 125),
        PositionInput(btc, D(0), D(0), D(59950), 125),  # flat rows are ignored
    ]
    state = account_state(D(100), positions)
    assert state.equity == D(50)
    assert state.available_balance_raw == D(50) - D("479.6")
    assert state.available_balance == 0
    assert state.maintenance_margin == D("249.75")
    assert state.is_liquidatable


def test_account_without_positions_is_never_liquidatable() -> None:
    state = account_state(D(0), [])
    assert not state.is_liquidatable
    assert state.margin_ratio is None
    assert account_state(D(10), []).margin_ratio == 0


def _equity_minus_maintenance(
    btc: Instrument, qty: Decimal, entry: Decimal, wallet: Decimal,
    other_upnl: Decimal, other_mm: Decimal, price: Decimal,
) -> Decimal:  # fmt: skip
    equity = wallet + other_upnl + qty * (price - entry)
    return equity - other_mm - maintenance_margin(btc, abs(qty) * price)


LIQUIDATIONS = [
    # qty, entry, wallet, other upnl, other maintenance, expected (rounded to 0.01) or None.
    # Expected values are hand-computed with Binance's cross formula in the bracket they land in:
    # LP = (WB − TMM + UPNL + cum − side·|q|·EP) / (|q|·MMR − side·|q|), e.g. long-bracket-2:
    # (10000 + 50 − 60000) / (0.005 − 1) = 50201.005…
    pytest.param("1", "60000", "10000", "0", "0", "50201.01", id="long-bracket-2"),
    pytest.param("1", "60000", "2000", "0", "0", "58241.21", id="long-thin"),
    pytest.param("-1", "60000", "10000", "0", "0", "69701.49", id="short"),
    pytest.param("0.5", "60000", "1000", "0", "0", "58232.93", id="long-bracket-1"),
    pytest.param("10", "60000", "100000", "0", "0", "50373.74", id="long-bracket-3"),
    pytest.param("1", "60000", "10000", "-3000", "500", "53718.59", id="long-with-others"),
    pytest.param("-2", "60000", "5000", "1000", "100", "62661.69", id="short-with-others"),
    pytest.param("1", "60000", "60000", "0", "0", None, id="long-fully-collateralised"),
    pytest.param("1", "60000", "70000", "0", "0", None, id="long-over-collateralised"),
    pytest.param("0", "0", "1000", "0", "0", None, id="flat"),
    pytest.param("-1", "60000", "-70000", "0", "0", "0", id="short-already-gone"),
]


@pytest.mark.parametrize(("qty", "entry", "wallet", "upnl", "mm", "expected"), LIQUIDATIONS)
def test_liquidation_price(
    btc: Instrument, qty: str, entry: str, wallet: str, upnl: str, mm: str, expected: str | None
) -> None:
    args = (D(qty), D(entry), D(wallet), D(upnl), D(mm))
    price = liquidation_price(btc, *args)
    if expected is None:
        assert price is None
        return
    assert price is not None
    assert price.quantize(D("0.01")) == D(expected)
    if price > 0:
        # The account sits exactly at maintenance at the liquidation price...
        assert abs(_equity_minus_maintenance(btc, *args, price)) < D("1e-18")
        # ...and is safe on the favourable side, liquidatable on the other.
        away = D("1.001") if D(qty) < 0 else D("0.999")
        toward = D("0.999") if D(qty) < 0 else D("1.001")
        assert _equity_minus_maintenance(btc, *args, price * away) < 0
        assert _equity_minus_maintenance(btc, *args, price * toward) > 0


@given(
    qty=st.integers(-200_000, 200_000).filter(bool).map(lambda n: D(n) / 1000),
    entry=st.integers(100_000, 20_000_000).map(lambda n: D(n) / 100),
    wallet=st.integers(-1_000_000, 10_000_000).map(D),
    other_upnl=st.integers(-100_000, 100_000).map(D),
    other_mm=st.integers(0, 50_000).map(D),
)
def test_account_is_exactly_at_maintenance_at_the_liquidation_price(
    btc: Instrument, qty: Decimal, entry: Decimal, wallet: Decimal,
    other_upnl: Decimal, other_mm: Decimal,
) -> None:  # fmt: skip
    args = (qty, entry, wallet, other_upnl, other_mm)
    price = liquidation_price(btc, *args)
    if price is None:
        # Only a long can be safe at every price: even a near-zero price leaves it solvent.
        assert qty > 0
        assert _equity_minus_maintenance(btc, *args, D("0.0001")) > 0
    elif price == 0:
        assert qty < 0
        assert _equity_minus_maintenance(btc, *args, D("0.0001")) <= 0
    else:
        scale = abs(qty) * price + abs(wallet) + 1
        assert abs(_equity_minus_maintenance(btc, *args, price)) < scale * D("1e-20")


def test_liquidation_prices_hold_the_other_positions_at_their_marks(btc: Instrument) -> None:
    positions = [
        PositionInput(btc, D(1), D(60000), D(61000), 20),
        PositionInput(btc, D(-10), D(3000), D(2900), 20),
    ]
    prices = liquidation_prices(D(5000), positions)
    for i, price in enumerate(prices):
        assert price is not None
        moved = list(positions)
        p = positions[i]
        moved[i] = PositionInput(p.instrument, p.qty, p.entry, price, p.leverage)
        state = account_state(D(5000), moved)
        assert abs(state.equity - state.maintenance_margin) < D("1e-18")


def _gapped(ratio_2: str, cum_2: str) -> Instrument:
    brackets = (
        Bracket(1, 50, D(0), D(1000), D("0.01"), D(0)),
        Bracket(2, 20, D(1000), D(10**9), D(ratio_2), D(cum_2)),
    )
    return Instrument(
        "X", "X", "USDT", D("0.01"), D("0.001"), D("0.001"), D(1000), D(1000), D(5),
        D("0.01"), D(10**6), 2, 3, brackets,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("ratio_2", "cum_2", "qty", "wallet", "expected"),
    [
        # Maintenance jumps up at 1000: the long is underwater on [1000, 1990), so 1990.
        pytest.param("0.5", "0", "1", "5", "1990", id="long-root-above-the-jump"),
        # Maintenance jumps down at 1000: surplus < 0 just below 1000, > 0 from 1000 up.
        pytest.param("0.02", "100", "1", "8", "1000", id="long-at-the-jump"),
        # Maintenance jumps up at 1000: a rising price liquidates the short at 1000.
        pytest.param("0.5", "0", "-1", "15", "1000", id="short-at-the-jump"),
    ],
)
def test_liquidation_price_with_gapped_brackets(
    ratio_2: str, cum_2: str, qty: str, wallet: str, expected: str
) -> None:
    # Inconsistent cum values (maintenance not continuous): the answer is where the account
    # first becomes liquidatable as the price moves against the position.
    assert liquidation_price(_gapped(ratio_2, cum_2), D(qty), D(1000), D(wallet)) == D(expected)
