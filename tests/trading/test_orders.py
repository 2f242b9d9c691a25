"""Order sizing, filter validation, reduce-only capping and time-in-force decisions."""

from decimal import Decimal

import pytest

from papertrade.trading.enums import OrderType, Side, TimeInForce
from papertrade.trading.errors import (
    FokNotFillable,
    InvalidPrice,
    InvalidQuantity,
    PostOnlyWouldTake,
    QtyTooSmall,
    ReduceOnlyRejected,
    TradingRuleError,
)
from papertrade.trading.orders import (
    Placement,
    is_marketable,
    limit_placement,
    order_problems,
    quantity_from_size_usd,
    reduce_only_quantity,
    reducing_side,
    size_from_quantity,
    validate_order,
)
from papertrade.trading.values import Instrument

D = Decimal
BUY, SELL = Side.BUY, Side.SELL
MARKET, LIMIT = OrderType.MARKET, OrderType.LIMIT


@pytest.mark.parametrize(
    ("size", "mark", "step", "min_qty", "expected"),
    [
        ("1000", "60000", "0.001", "0.001", "0.016"),  # 0.01666… floors, never rounds up
        ("600", "60000", "0.001", "0.001", "0.010"),
        ("100", "3", "0.01", "0.01", "33.33"),
        ("100", "3", "1", "0", "33"),
    ],
)
def test_quantity_from_size_usd(
    size: str, mark: str, step: str, min_qty: str, expected: str
) -> None:
    assert quantity_from_size_usd(D(size), D(mark), D(step), D(min_qty)) == D(expected)


@pytest.mark.parametrize(
    ("size", "mark", "min_qty", "error"),
    [
        ("10", "60000", "0.001", QtyTooSmall),  # 0.000166 floors to 0
        ("100", "60000", "0.002", QtyTooSmall),  # 0.001 is on the step but below min qty
        ("0", "60000", "0.001", InvalidQuantity),
        ("-5", "60000", "0.001", InvalidQuantity),
        ("100", "0", "0.001", InvalidPrice),
    ],
)
def test_quantity_from_size_usd_errors(
    size: str, mark: str, min_qty: str, error: type[TradingRuleError]
) -> None:
    with pytest.raises(error):
        quantity_from_size_usd(D(size), D(mark), D("0.001"), D(min_qty))


def test_size_from_quantity() -> None:
    assert size_from_quantity(D("0.016"), D(60000)) == D(960)
    assert size_from_quantity(D("-0.016"), D(60000)) == D(960)


# fmt: off
VALIDATIONS = [
    # side, type, quantity, price, reduce_only, mark, expected codes (first one is raised)
    pytest.param(BUY, LIMIT, "0.002", "60000.0", False, None, [], id="limit-ok"),
    pytest.param(SELL, MARKET, "0.01", None, False, "60000", [], id="market-ok"),
    pytest.param(SELL, MARKET, "0.001", None, False, None, [], id="market-no-mark-no-notional"),
    pytest.param(BUY, LIMIT, "121", "60000", False, None, [], id="limit-above-market-max"),
    pytest.param(BUY, LIMIT, "0", "60000", False, None, ["invalid_quantity"], id="qty-zero"),
    pytest.param(BUY, LIMIT, "-1", "60000", False, None, ["invalid_quantity"], id="qty-neg"),
    pytest.param(BUY, LIMIT, "0.0025", "60000", False, None, ["qty_off_step"], id="qty-off-step"),
    pytest.param(
        BUY, LIMIT, "0.0005", "600000", False, None, ["qty_off_step", "qty_too_small"],
        id="qty-off-step-and-small",
    ),
    pytest.param(BUY, LIMIT, "1001", "60000", False, None, ["qty_too_large"], id="limit-max"),
    pytest.param(BUY, MARKET, "121", None, False, "60000", ["qty_too_large"], id="market-max"),
    pytest.param(BUY, LIMIT, "1", None, False, None, ["invalid_price"], id="limit-no-price"),
    pytest.param(BUY, LIMIT, "1", "0", False, None, ["invalid_price"], id="price-zero"),
    pytest.param(BUY, LIMIT, "1", "-5", False, None, ["invalid_price"], id="price-neg"),
    pytest.param(BUY, MARKET, "1", "60000", False, None, ["invalid_price"], id="market-price"),
    pytest.param(BUY, LIMIT, "1", "60000.05", False, None, ["price_off_tick"], id="off-tick"),
    pytest.param(BUY, LIMIT, "1", "500", False, None, ["price_too_low"], id="price-low"),
    pytest.param(SELL, LIMIT, "1", "5000000", False, None, ["price_too_high"], id="price-high"),
    pytest.param(
        BUY, LIMIT, "0.001", "60000", False, None, ["notional_too_small"], id="notional-limit"
    ),
    pytest.param(BUY, LIMIT, "0.001", "60000", True, None, [], id="reduce-only-exempt"),
    pytest.param(
        SELL, MARKET, "0.001", None, False, "60000", ["notional_too_small"], id="notional-market"
    ),
    pytest.param(
        BUY, LIMIT, "0.001", "60000.05", False, None, ["price_off_tick"],
        id="bad-price-skips-notional",
    ),
]
# fmt: on


@pytest.mark.parametrize(
    ("side", "order_type", "qty", "price", "reduce_only", "mark", "codes"), VALIDATIONS
)
def test_validate_order(
    btc: Instrument, side: Side, order_type: OrderType, qty: str, price: str | None,
    reduce_only: bool, mark: str | None, codes: list[str],
) -> None:  # fmt: skip
    args = (btc, side, order_type, D(qty), None if price is None else D(price), reduce_only)
    reference = None if mark is None else D(mark)
    assert [p.code for p in order_problems(*args, mark=reference)] == codes
    if not codes:
        validate_order(*args, mark=reference)
        return
    with pytest.raises(TradingRuleError) as info:
        validate_order(*args, mark=reference)
    assert info.value.code == codes[0]


@pytest.mark.parametrize(
    ("position", "expected"), [("1", SELL), ("0.001", SELL), ("-2", BUY), ("0", None)]
)
def test_reducing_side(position: str, expected: Side | None) -> None:
    assert reducing_side(D(position)) is expected


@pytest.mark.parametrize(
    ("position", "side", "qty", "expected"),
    [
        ("1", SELL, "0.5", "0.5"),
        ("1", SELL, "1", "1"),
        ("1", SELL, "2", "1"),  # capped at the position: a close never flips
        ("-1", BUY, "3", "1"),
        ("-0.25", BUY, "0.1", "0.1"),
    ],
)
def test_reduce_only_quantity(position: str, side: Side, qty: str, expected: str) -> None:
    assert reduce_only_quantity(D(position), side, D(qty)) == D(expected)


@pytest.mark.parametrize(
    ("position", "side", "qty", "error"),
    [
        ("1", BUY, "1", ReduceOnlyRejected),  # would increase the long
        ("-1", SELL, "1", ReduceOnlyRejected),
        ("0", SELL, "1", ReduceOnlyRejected),  # nothing to reduce
        ("0", BUY, "1", ReduceOnlyRejected),
        ("1", SELL, "0", InvalidQuantity),
    ],
)
def test_reduce_only_rejections(
    position: str, side: Side, qty: str, error: type[TradingRuleError]
) -> None:
    with pytest.raises(error):
        reduce_only_quantity(D(position), side, D(qty))


@pytest.mark.parametrize(
    ("side", "limit", "mark", "expected"),
    [
        (BUY, "101", "100", True),
        (BUY, "100", "100", True),
        (BUY, "99.9", "100", False),
        (SELL, "99", "100", True),
        (SELL, "100", "100", True),
        (SELL, "100.1", "100", False),
    ],
)
def test_is_marketable(side: Side, limit: str, mark: str, expected: bool) -> None:
    assert is_marketable(side, D(limit), D(mark)) is expected


@pytest.mark.parametrize(
    ("side", "tif", "limit", "expected"),
    [
        (BUY, TimeInForce.GTC, "101", Placement.FILL),
        (BUY, TimeInForce.GTC, "99", Placement.REST),
        (SELL, TimeInForce.GTC, "101", Placement.REST),
        (BUY, TimeInForce.IOC, "101", Placement.FILL),
        (BUY, TimeInForce.IOC, "99", Placement.EXPIRE),
        (SELL, TimeInForce.FOK, "99", Placement.FILL),
        (BUY, TimeInForce.GTX, "99", Placement.REST),
        (SELL, TimeInForce.GTX, "101", Placement.REST),
        (BUY, TimeInForce.GTX, "101", PostOnlyWouldTake),
        (SELL, TimeInForce.GTX, "100", PostOnlyWouldTake),
        (BUY, TimeInForce.FOK, "99", FokNotFillable),
    ],
)
def test_limit_placement(
    side: Side, tif: TimeInForce, limit: str, expected: Placement | type[TradingRuleError]
) -> None:
    if isinstance(expected, Placement):
        assert limit_placement(side, tif, D(limit), D(100)) is expected
    else:
        with pytest.raises(expected):
            limit_placement(side, tif, D(limit), D(100))
