"""Pure decisions for placing an order: sizing, filter validation, reduce-only, time in force.

Nothing here rounds a price or quantity the caller gave: anything off the grid is an error.
Sizing from a USD amount is the one place that floors, because there the caller asked for it.
Messages show the caller's numbers as given (never in exponent form), USDT amounts at 6 decimals
and marks at the instrument's tick.
"""

from decimal import Decimal
from enum import StrEnum

from papertrade.kit.decimals import ZERO, floor_to_step, is_multiple, money_text, plain, price_text
from papertrade.trading.enums import OrderType, Side, TimeInForce
from papertrade.trading.errors import (
    FokNotFillable,
    InvalidPrice,
    InvalidQuantity,
    NotionalTooSmall,
    PostOnlyWouldTake,
    PriceOffTick,
    PriceTooHigh,
    PriceTooLow,
    QtyOffStep,
    QtyTooLarge,
    QtyTooSmall,
    ReduceOnlyRejected,
    TradingRuleError,
)
from papertrade.trading.values import Instrument


def size_from_quantity(quantity: Decimal, mark: Decimal) -> Decimal:
    """USD size (absolute notional) of a quantity at the mark price."""
    return abs(quantity) * mark


def quantity_from_size_usd(
    size_usd: Decimal, mark: Decimal, step: Decimal, min_qty: Decimal = ZERO, tick: Decimal = ZERO
) -> Decimal:
    """Quantity for a USD size at the mark, floored to the step; QtyTooSmall below min_qty."""
    if size_usd <= ZERO:
        raise InvalidQuantity(f"size must be positive, got {plain(size_usd)}")
    if mark <= ZERO:
        raise InvalidPrice(f"mark price must be positive, got {plain(mark)}")
    quantity = floor_to_step(size_usd / mark, step)
    if quantity <= ZERO or quantity < min_qty:
        raise QtyTooSmall(
            f"size {money_text(size_usd)} at {price_text(mark, tick)} gives quantity "
            f"{plain(quantity)}, below minimum {plain(min_qty or step)}"
        )
    return quantity


def _quantity_problems(
    instrument: Instrument, order_type: OrderType, quantity: Decimal
) -> list[TradingRuleError]:
    if quantity <= ZERO:
        return [InvalidQuantity(f"quantity must be positive, got {plain(quantity)}")]
    problems: list[TradingRuleError] = []
    shown = plain(quantity)
    if not is_multiple(quantity, instrument.step_size):
        problems.append(
            QtyOffStep(f"quantity {shown} is not a multiple of {plain(instrument.step_size)}")
        )
    if quantity < instrument.min_qty:
        problems.append(
            QtyTooSmall(f"quantity {shown} is below minimum {plain(instrument.min_qty)}")
        )
    limit = instrument.market_max_qty if order_type is OrderType.MARKET else instrument.max_qty
    if limit > ZERO and quantity > limit:
        problems.append(QtyTooLarge(f"quantity {shown} is above maximum {plain(limit)}"))
    return problems


def _price_problems(
    instrument: Instrument, order_type: OrderType, price: Decimal | None
) -> list[TradingRuleError]:
    if order_type is OrderType.MARKET:
        return [] if price is None else [InvalidPrice("market orders take no price")]
    if price is None or price <= ZERO:
        shown_price = "none" if price is None else plain(price)
        return [InvalidPrice(f"limit orders need a positive price, got {shown_price}")]
    problems: list[TradingRuleError] = []
    shown = plain(price)
    # Binance treats a zero min/max price as "no bound"; the tick grid starts at min price.
    if instrument.min_price > ZERO and price < instrument.min_price:
        problems.append(
            PriceTooLow(f"price {shown} is below minimum {plain(instrument.min_price)}")
        )
    if instrument.max_price > ZERO and price > instrument.max_price:
        problems.append(
            PriceTooHigh(f"price {shown} is above maximum {plain(instrument.max_price)}")
        )
    if not is_multiple(price - instrument.min_price, instrument.tick_size):
        problems.append(
            PriceOffTick(f"price {shown} is not on the {plain(instrument.tick_size)} tick")
        )
    return problems


def order_problems(
    instrument: Instrument,
    side: Side,
    order_type: OrderType,
    quantity: Decimal,
    price: Decimal | None,
    reduce_only: bool = False,
    *,
    mark: Decimal | None = None,
) -> list[TradingRuleError]:
    """Every filter an order breaks, in a stable order (quantity, price, notional)."""
    problems = _quantity_problems(instrument, order_type, quantity)
    price_problems = _price_problems(instrument, order_type, price)
    problems += price_problems
    reference = price if order_type is OrderType.LIMIT else mark
    # Binance exempts reduce-only orders from the minimum notional so small positions can close.
    if (
        not reduce_only
        and not price_problems
        and reference is not None
        and quantity > ZERO
        and quantity * reference < instrument.min_notional
    ):
        problems.append(
            NotionalTooSmall(
                f"{side} notional {money_text(quantity * reference)} is below minimum "
                f"{money_text(instrument.min_notional)}"
            )
        )
    return problems


def validate_order(
    instrument: Instrument,
    side: Side,
    order_type: OrderType,
    quantity: Decimal,
    price: Decimal | None,
    reduce_only: bool = False,
    *,
    mark: Decimal | None = None,
) -> None:
    """Raise the first TradingRuleError the order breaks (market orders check notional at mark)."""
    problems = order_problems(instrument, side, order_type, quantity, price, reduce_only, mark=mark)
    if problems:
        raise problems[0]


def reducing_side(position_qty: Decimal) -> Side | None:
    """The side that reduces a position: SELL for a long, BUY for a short, None when flat."""
    if position_qty > ZERO:
        return Side.SELL
    if position_qty < ZERO:
        return Side.BUY
    return None


def reduce_only_quantity(position_qty: Decimal, side: Side, quantity: Decimal) -> Decimal:
    """Cap a reduce-only/close order at the position size; ReduceOnlyRejected if it can't reduce."""
    if quantity <= ZERO:
        raise InvalidQuantity(f"quantity must be positive, got {plain(quantity)}")
    if reducing_side(position_qty) is not side:
        raise ReduceOnlyRejected(
            f"a {side} order cannot reduce a position of {plain(position_qty)}"
        )
    return min(quantity, abs(position_qty))


def is_marketable(side: Side, limit_price: Decimal, mark: Decimal) -> bool:
    """True when a limit order would execute immediately at the mark (buy ≥ mark, sell ≤ mark)."""
    return limit_price >= mark if side is Side.BUY else limit_price <= mark


class Placement(StrEnum):
    """What to do with a new limit order right now."""

    FILL = "fill"  # execute immediately as taker
    REST = "rest"  # put it in the book
    EXPIRE = "expire"  # IOC that cannot execute: status expired, nothing filled


def limit_placement(
    side: Side,
    time_in_force: TimeInForce,
    limit_price: Decimal,
    mark: Decimal,
    tick: Decimal = ZERO,
) -> Placement:
    """Decide a new limit order's fate; raises PostOnlyWouldTake or FokNotFillable."""
    # The paper market has unlimited depth at the mark, so a marketable order always fills in
    # full and an IOC/FOK that is not marketable fills nothing.
    if is_marketable(side, limit_price, mark):
        if time_in_force is TimeInForce.GTX:
            raise PostOnlyWouldTake(
                f"post-only {side} at {plain(limit_price)} would take at {price_text(mark, tick)}"
            )
        return Placement.FILL
    if time_in_force is TimeInForce.FOK:
        raise FokNotFillable(
            f"fill-or-kill {side} at {plain(limit_price)} cannot fill at {price_text(mark, tick)}"
        )
    if time_in_force is TimeInForce.IOC:
        return Placement.EXPIRE
    return Placement.REST
