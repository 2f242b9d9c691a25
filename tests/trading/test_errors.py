"""Trading rule errors carry stable codes."""

import pickle

import pytest

from papertrade.trading import errors
from papertrade.trading.errors import TradingRuleError, error_classes

EXPECTED_CODES = {
    "InvalidQuantity": "invalid_quantity",
    "InvalidPrice": "invalid_price",
    "PriceOffTick": "price_off_tick",
    "PriceTooLow": "price_too_low",
    "PriceTooHigh": "price_too_high",
    "QtyOffStep": "qty_off_step",
    "QtyTooSmall": "qty_too_small",
    "QtyTooLarge": "qty_too_large",
    "NotionalTooSmall": "notional_too_small",
    "InvalidLeverage": "invalid_leverage",
    "MaxPositionExceeded": "max_position_exceeded",
    "InsufficientMargin": "insufficient_margin",
    "ReduceOnlyRejected": "reduce_only_rejected",
    "PostOnlyWouldTake": "post_only_would_take",
    "FokNotFillable": "fok_not_fillable",
    "MarginTypeUnchanged": "margin_type_unchanged",
    "MarginTypeOpenOrders": "margin_type_open_orders",
    "MarginTypePosition": "margin_type_position",
    "NotIsolated": "not_isolated",
    "CrossBalanceInsufficient": "cross_balance_insufficient",
    "IsolatedBalanceInsufficient": "isolated_balance_insufficient",
    "IsolatedLeverageReduction": "isolated_leverage_reduction",
    "PositionModeUnchanged": "position_mode_unchanged",
    "PositionModeOpenOrders": "position_mode_open_orders",
    "PositionModePosition": "position_mode_position",
    "PositionSideMismatch": "position_side_mismatch",
    "ReduceOnlyInHedgeMode": "reduce_only_in_hedge_mode",
}


@pytest.mark.parametrize(("name", "code"), EXPECTED_CODES.items())
def test_each_error_has_its_code(name: str, code: str) -> None:
    cls = getattr(errors, name)
    error = cls("something is wrong")
    assert isinstance(error, TradingRuleError)
    assert error.code == code
    assert error.message == "something is wrong"
    assert str(error) == f"{code}: something is wrong"
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.code, copy.message) == (cls, code, "something is wrong")


def test_registry_lists_every_code() -> None:
    assert {code: cls.__name__ for code, cls in error_classes().items()} == {
        code: name for name, code in EXPECTED_CODES.items()
    }


def test_base_error_takes_any_code() -> None:
    error = TradingRuleError("custom_code", "why")
    assert (error.code, error.message) == ("custom_code", "why")
    assert pickle.loads(pickle.dumps(error)).code == "custom_code"
