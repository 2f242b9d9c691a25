"""Typed trading-rule errors; each carries a stable snake_case `code` the HTTP layers map."""

from typing import ClassVar


class TradingRuleError(Exception):
    """An order or account action broke a trading rule."""

    default_code: ClassVar[str] = "trading_rule_error"

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class _CodedError(TradingRuleError):
    """A TradingRuleError whose code is fixed by its class."""

    def __init__(self, message: str) -> None:
        super().__init__(self.default_code, message)

    def __reduce__(self) -> tuple[type["_CodedError"], tuple[str]]:
        # Exception pickling replays self.args into __init__, which takes only the message here.
        return (type(self), (self.message,))


class InvalidQuantity(_CodedError):
    """Quantity is zero or negative."""

    default_code = "invalid_quantity"


class InvalidPrice(_CodedError):
    """Price is missing, zero or negative, or given where none is allowed."""

    default_code = "invalid_price"


class PriceOffTick(_CodedError):
    """Price does not lie on the instrument's tick grid."""

    default_code = "price_off_tick"


class PriceTooLow(_CodedError):
    """Price is below the instrument's minimum price."""

    default_code = "price_too_low"


class PriceTooHigh(_CodedError):
    """Price is above the instrument's maximum price."""

    default_code = "price_too_high"


class QtyOffStep(_CodedError):
    """Quantity does not lie on the instrument's step grid."""

    default_code = "qty_off_step"


class QtyTooSmall(_CodedError):
    """Quantity is below the instrument's minimum quantity."""

    default_code = "qty_too_small"


class QtyTooLarge(_CodedError):
    """Quantity is above the instrument's maximum (limit or market) quantity."""

    default_code = "qty_too_large"


class NotionalTooSmall(_CodedError):
    """Order value is below the instrument's minimum notional."""

    default_code = "notional_too_small"


class InvalidLeverage(_CodedError):
    """Leverage is outside 1..max leverage of the instrument."""

    default_code = "invalid_leverage"


class MaxPositionExceeded(_CodedError):
    """The position would exceed the largest notional allowed at the chosen leverage."""

    default_code = "max_position_exceeded"


class InsufficientMargin(_CodedError):
    """Available balance does not cover the margin the action needs."""

    default_code = "insufficient_margin"


class ReduceOnlyRejected(_CodedError):
    """A reduce-only or close order would not reduce the position."""

    default_code = "reduce_only_rejected"


class PostOnlyWouldTake(_CodedError):
    """A post-only (GTX) order would execute immediately as taker."""

    default_code = "post_only_would_take"


class FokNotFillable(_CodedError):
    """A fill-or-kill order cannot be filled completely right now."""

    default_code = "fok_not_fillable"


class MarginTypeUnchanged(_CodedError):
    """The symbol already has that margin type (Binance -4046)."""

    default_code = "margin_type_unchanged"


class MarginTypeOpenOrders(_CodedError):
    """The margin type cannot change while the symbol has open orders."""

    default_code = "margin_type_open_orders"


class MarginTypePosition(_CodedError):
    """The margin type cannot change while the symbol has a position."""

    default_code = "margin_type_position"


class NotIsolated(_CodedError):
    """Margin can only be added to or taken from an open isolated position."""

    default_code = "not_isolated"


class CrossBalanceInsufficient(_CodedError):
    """The available balance does not cover the margin to add."""

    default_code = "cross_balance_insufficient"


class IsolatedBalanceInsufficient(_CodedError):
    """The isolated position cannot give up that much margin."""

    default_code = "isolated_balance_insufficient"


class IsolatedLeverageReduction(_CodedError):
    """An open isolated position's leverage may rise, not fall (its margin is fixed)."""

    default_code = "isolated_leverage_reduction"


class PositionModeUnchanged(_CodedError):
    """The portfolio is already in that position mode (Binance -4059)."""

    default_code = "position_mode_unchanged"


class PositionModeOpenOrders(_CodedError):
    """The position mode cannot change while orders are open."""

    default_code = "position_mode_open_orders"


class PositionModePosition(_CodedError):
    """The position mode cannot change while a position is open."""

    default_code = "position_mode_position"


class PositionSideMismatch(_CodedError):
    """The order's position side does not fit the portfolio's mode (Binance -4061)."""

    default_code = "position_side_mismatch"


class ReduceOnlyInHedgeMode(_CodedError):
    """reduceOnly is not used in hedge mode: an order closes by naming its position side."""

    default_code = "reduce_only_in_hedge_mode"


def error_classes() -> dict[str, type[TradingRuleError]]:
    """Every concrete error class by its code, for the HTTP layers' mapping tables."""
    return {cls.default_code: cls for cls in _CodedError.__subclasses__()}
