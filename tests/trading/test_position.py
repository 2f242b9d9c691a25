"""Position maths: open, add, reduce, close, flip; PnL signs; cash-flow equivalence."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from papertrade.trading.position import (
    PositionChange,
    apply_fill,
    average_entry,
    notional,
    opening_quantity,
    unrealized_pnl,
)

D = Decimal

# (qty_before, entry_before, fill, price) -> (qty_after, entry_after, realized, closed, opened)
# fmt: off
FILLS = [
    pytest.param("0", "0", "1", "100", "1", "100", "0", "0", "1", id="open-long"),
    pytest.param("0", "0", "-2", "100", "-2", "100", "0", "0", "2", id="open-short"),
    pytest.param("1", "100", "1", "110", "2", "105", "0", "0", "1", id="add-long"),
    pytest.param("-1", "100", "-3", "120", "-4", "115", "0", "0", "3", id="add-short"),
    pytest.param(
        "1", "100", "2", "100.01", "3", "100.00666667", "0", "0", "2", id="add-rounds-8dp"
    ),
    pytest.param(
        "1", "100.00000001", "1", "100.00000002", "2", "100.00000002", "0", "0", "1",
        id="half-even-up-to-even",
    ),
    pytest.param(
        "1", "100.00000002", "1", "100.00000003", "2", "100.00000002", "0", "0", "1",
        id="half-even-down-to-even",
    ),
    pytest.param("2", "100", "-1", "110", "1", "100", "10", "1", "0", id="reduce-long-profit"),
    pytest.param("2", "100", "-1", "90", "1", "100", "-10", "1", "0", id="reduce-long-loss"),
    pytest.param("-2", "100", "1", "90", "-1", "100", "10", "1", "0", id="reduce-short-profit"),
    pytest.param("-2", "100", "1", "110", "-1", "100", "-10", "1", "0", id="reduce-short-loss"),
    pytest.param("2", "100", "-2", "105", "0", "0", "10", "2", "0", id="close-long"),
    pytest.param("-2", "100", "2", "105", "0", "0", "-10", "2", "0", id="close-short"),
    pytest.param("1", "100", "-3", "120", "-2", "120", "20", "1", "2", id="flip-long-to-short"),
    pytest.param("-1", "100", "3", "120", "2", "120", "-20", "1", "2", id="flip-short-to-long"),
    pytest.param("1", "100", "0", "50", "1", "100", "0", "0", "0", id="empty-fill"),
    pytest.param(
        "0.003", "60000.1", "-0.001", "60100.5", "0.002", "60000.1", "0.1004", "0.001", "0",
        id="fractional-reduce",
    ),
]
# fmt: on


@pytest.mark.parametrize(
    ("q0", "e0", "fill", "price", "q1", "e1", "realized", "closed", "opened"), FILLS
)
def test_apply_fill(
    q0: str, e0: str, fill: str, price: str,
    q1: str, e1: str, realized: str, closed: str, opened: str,
) -> None:  # fmt: skip
    change = apply_fill(D(q0), D(e0), D(fill), D(price))
    assert change == PositionChange(D(q1), D(e1), D(realized), D(closed), D(opened))
    assert change.flipped is (D(closed) > 0 and D(opened) > 0)


def test_break_even_close_is_positive_zero() -> None:
    change = apply_fill(D(-1), D(100), D(1), D(100))
    assert change.realized_pnl == 0
    assert not change.realized_pnl.is_signed()


@pytest.mark.parametrize(
    ("qty", "entry", "mark", "expected"),
    [
        ("1", "100", "110", "10"),
        ("1", "100", "90", "-10"),
        ("-1", "100", "90", "10"),
        ("-1", "100", "110", "-10"),
        ("-0.5", "100", "100", "0"),
        ("0", "0", "100", "0"),
    ],
)
def test_unrealized_pnl(qty: str, entry: str, mark: str, expected: str) -> None:
    result = unrealized_pnl(D(qty), D(entry), D(mark))
    assert result == D(expected)
    assert not (result == 0 and result.is_signed())


@pytest.mark.parametrize(
    ("qty", "mark", "expected"), [("2", "100", "200"), ("-2", "100", "-200"), ("0", "5", "0")]
)
def test_notional_is_signed(qty: str, mark: str, expected: str) -> None:
    assert notional(D(qty), D(mark)) == D(expected)


@pytest.mark.parametrize(
    ("qty", "fill", "expected"),
    [("0", "1", "1"), ("0", "-1", "1"), ("1", "2", "2"), ("2", "-1", "0"), ("2", "-2", "0"),
     ("2", "-5", "3"), ("-2", "5", "3"), ("-2", "-1", "1")],
)  # fmt: skip
def test_opening_quantity(qty: str, fill: str, expected: str) -> None:
    assert opening_quantity(D(qty), D(fill)) == D(expected)
    assert opening_quantity(D(qty), D(fill)) == apply_fill(D(qty), D(100), D(fill), D(1)).opened_qty


def test_average_entry_of_nothing_is_zero() -> None:
    assert average_entry(D(0), D(0), D(0), D(100)) == 0


quantities = st.integers(-5000, 5000).filter(bool).map(lambda n: D(n) / 1000)
prices = st.integers(1, 10_000_000).map(lambda n: D(n) / 100)


@given(st.lists(st.tuples(quantities, prices), max_size=40), prices)
def test_realized_plus_unrealized_equals_cash_flow_pnl(
    fills: list[tuple[Decimal, Decimal]], mark: Decimal
) -> None:
    qty = entry = realized = cash = tolerance = D(0)
    for fill_qty, price in fills:
        change = apply_fill(qty, entry, fill_qty, price)
        # Invariants of every single step.
        assert change.qty_after == qty + fill_qty
        assert change.closed_qty + change.opened_qty == abs(fill_qty)
        assert (change.entry_after == 0) is (change.qty_after == 0)
        if change.closed_qty and change.opened_qty:
            assert change.entry_after == price
        if change.closed_qty == 0 and qty != 0:
            # Only an add averages the entry; each rounding is at most half of 1e-8 per unit.
            tolerance += abs(change.qty_after) * D("0.000000005")
        qty, entry = change.qty_after, change.entry_after
        realized += change.realized_pnl
        cash -= fill_qty * price  # buying spends cash, selling receives it
    mark_to_market = cash + qty * mark
    assert abs(realized + unrealized_pnl(qty, entry, mark) - mark_to_market) <= tolerance


@given(quantities, prices, prices)
def test_closing_what_was_opened_realizes_the_price_move(
    qty: Decimal, open_price: Decimal, close_price: Decimal
) -> None:
    opened = apply_fill(D(0), D(0), qty, open_price)
    closed = apply_fill(opened.qty_after, opened.entry_after, -qty, close_price)
    assert closed.qty_after == 0 and closed.entry_after == 0
    assert closed.realized_pnl == qty * (close_price - open_price)
