"""Pure rules of conditional orders: stop and take-profit, market or limit, and trailing stops.

A conditional order waits for a price (the mark, or the last price) to reach its trigger, then
places an ordinary order. Binance's directions (followed by every client):

- STOP / STOP_MARKET: a buy triggers when the price rises to the trigger, a sell when it falls.
- TAKE_PROFIT / TAKE_PROFIT_MARKET: a buy triggers when the price falls to the trigger, a sell
  when it rises.
- TRAILING_STOP_MARKET: a sell follows the highest price since activation and triggers when the
  price falls `callback_rate` percent below it; a buy mirrors that from the lowest price.
"""

from decimal import Decimal
from enum import StrEnum

from papertrade.kit.decimals import ZERO, is_multiple, plain
from papertrade.trading.enums import OrderType, Side
from papertrade.trading.errors import TradingRuleError

MIN_CALLBACK_RATE = Decimal("0.1")  # percent, as Binance
MAX_CALLBACK_RATE = Decimal("10")


class ConditionalType(StrEnum):
    STOP = "stop"
    STOP_MARKET = "stop_market"
    TAKE_PROFIT = "take_profit"
    TAKE_PROFIT_MARKET = "take_profit_market"
    TRAILING_STOP_MARKET = "trailing_stop_market"

    @property
    def order_type(self) -> OrderType:
        """The type of the order placed when it triggers."""
        return OrderType.LIMIT if self in _LIMIT_TYPES else OrderType.MARKET

    @property
    def is_trailing(self) -> bool:
        return self is ConditionalType.TRAILING_STOP_MARKET


class WorkingType(StrEnum):
    """Which price a trigger watches: the mark, or the last traded price ("contract price")."""

    MARK_PRICE = "MARK_PRICE"
    CONTRACT_PRICE = "CONTRACT_PRICE"


class Direction(StrEnum):
    RISE = "rise"  # triggers when the price reaches the level from below: price >= level
    FALL = "fall"  # triggers when the price reaches the level from above: price <= level


class ConditionalStatus(StrEnum):
    NEW = "new"  # waiting for its trigger
    TRIGGERED = "triggered"  # its order was placed (actual_order_id)
    CANCELED = "canceled"
    REJECTED = "rejected"  # it triggered but its order was refused (reason kept)
    EXPIRED = "expired"  # it triggered with nothing left to close

    @property
    def is_open(self) -> bool:
        return self is ConditionalStatus.NEW


_LIMIT_TYPES = frozenset({ConditionalType.STOP, ConditionalType.TAKE_PROFIT})
_STOPS = frozenset(
    {
        ConditionalType.STOP,
        ConditionalType.STOP_MARKET,
        ConditionalType.TRAILING_STOP_MARKET,
    }
)


class WouldTriggerImmediately(TradingRuleError):
    default_code = "would_trigger_immediately"

    def __init__(self, message: str) -> None:
        super().__init__(self.default_code, message)

    def __reduce__(self) -> tuple[type["WouldTriggerImmediately"], tuple[str]]:
        return (type(self), (self.message,))


class InvalidConditional(TradingRuleError):
    default_code = "invalid_conditional"

    def __init__(self, message: str) -> None:
        super().__init__(self.default_code, message)

    def __reduce__(self) -> tuple[type["InvalidConditional"], tuple[str]]:
        return (type(self), (self.message,))


def direction(kind: ConditionalType, side: Side) -> Direction:
    """Which way the price must move to trigger an order of this kind and side."""
    stop = kind in _STOPS
    if (side is Side.BUY) == stop:
        return Direction.RISE
    return Direction.FALL


def reached(way: Direction, level: Decimal, price: Decimal) -> bool:
    """Whether `price` has reached a trigger `level` in direction `way`."""
    return price >= level if way is Direction.RISE else price <= level


def trailing_level(side: Side, extreme: Decimal, callback_rate: Decimal) -> Decimal:
    """The trigger of a trailing stop from the best price since activation (`extreme`)."""
    offset = extreme * callback_rate / Decimal(100)
    return extreme - offset if side is Side.SELL else extreme + offset


def validate(
    *,
    kind: ConditionalType,
    side: Side,
    trigger_price: Decimal | None,
    price: Decimal | None,
    callback_rate: Decimal | None,
    activation_price: Decimal | None,
    current: Decimal,
    tick_size: Decimal,
) -> None:
    """Refuse a conditional order that is malformed or would trigger at once (Binance -2021)."""
    if kind.is_trailing:
        if callback_rate is None:
            raise InvalidConditional("a trailing stop needs callback_rate (0.1 to 10 percent)")
        if not MIN_CALLBACK_RATE <= callback_rate <= MAX_CALLBACK_RATE:
            raise InvalidConditional(
                f"callback_rate {plain(callback_rate)} is outside 0.1 to 10 percent"
            )
        if price is not None:
            raise InvalidConditional("a trailing stop takes no price; it closes at market")
        return
    if callback_rate is not None or activation_price is not None:
        raise InvalidConditional("callback_rate and activation_price are for trailing stops")
    if trigger_price is None or trigger_price <= ZERO:
        raise InvalidConditional("a stop or take-profit order needs a positive trigger price")
    if not is_multiple(trigger_price, tick_size):
        raise InvalidConditional(
            f"trigger price {plain(trigger_price)} is not a multiple of {plain(tick_size)}"
        )
    if kind.order_type is OrderType.LIMIT and price is None:
        raise InvalidConditional(f"a {kind.value.upper()} order needs a limit price")
    if kind.order_type is OrderType.MARKET and price is not None:
        raise InvalidConditional(f"a {kind.value.upper()} order takes no limit price")
    if reached(direction(kind, side), trigger_price, current):
        raise WouldTriggerImmediately(
            f"trigger price {plain(trigger_price)} is already reached (price now {plain(current)})"
        )
