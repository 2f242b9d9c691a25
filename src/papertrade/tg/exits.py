"""A Cornix signal's exits as real conditional orders, in the unit of work that placed its entry.

- The stop becomes a close-position STOP_MARKET (the one the webhook's `sl` places).
- The take-profits become reduce-only TAKE_PROFIT_MARKET orders splitting the entry's quantity
  evenly across the targets (Cornix's default "evenly divided" split), each floored to the lot
  step, the remainder on the last target.

Both watch the mark price, the price the signal was checked against. They are placed at once,
also for a limit entry that has not filled yet: reduce-only, they can never open a position, so
no job has to wait for the fill; one that triggers before the entry fills finds nothing to close
and ends without trading (the stop expires, a take-profit is rejected).
"""

from dataclasses import dataclass, field
from decimal import Decimal

from papertrade.auth.principal import Principal
from papertrade.conditional import service as conditional_service
from papertrade.conditional.commands import PlaceConditional
from papertrade.kit.decimals import ZERO, floor_to_step, plain
from papertrade.models import ConditionalOrder
from papertrade.orders import workset
from papertrade.orders.pricing import Venue
from papertrade.orders.record import AnyOrder
from papertrade.tg.cornix import CornixSignal
from papertrade.trading.conditional import ConditionalType, WorkingType
from papertrade.trading.enums import OrderType, Side
from papertrade.trading.values import Instrument
from papertrade.uow import AsyncWork
from papertrade.webhooks.errors import SignalError
from papertrade.webhooks.execute import place_stop_loss

SOURCE = "webhook"  # what the signal's entry order records as its origin, too


@dataclass
class Exits:
    """What was placed, and a line per exit for the history and the reply."""

    orders: list[ConditionalOrder] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def split(total: Decimal, targets: int, instrument: Instrument) -> list[Decimal]:
    """`total` across `targets` evenly, floored to the lot step, the remainder on the last; when
    an even share is below the minimum quantity, only the first targets get a share."""
    step, minimum = instrument.step_size, instrument.min_qty
    while targets > 1 and floor_to_step(total / targets, step) < minimum:
        targets -= 1
    each = floor_to_step(total / targets, step)
    return [each] * (targets - 1) + [total - each * (targets - 1)]


def _on_tick(price: Decimal, instrument: Instrument) -> Decimal:
    return (price / instrument.tick_size).to_integral_value() * instrument.tick_size


def check_stop(signal: CornixSignal, instrument: Instrument, mark: Decimal) -> Decimal:
    """The stop on the tick; refused when the price is already past it (it would close at once)."""
    stop = _on_tick(signal.stops[0], instrument)
    long = signal.side == "buy"
    if stop >= mark if long else stop <= mark:
        where = "below" if long else "above"
        raise SignalError(
            f"The stop {plain(stop)} must be {where} the price {plain(mark)}: the price is "
            "already past it."
        )
    return stop


async def place(
    uow: AsyncWork,
    venue: Venue,
    principal: Principal,
    signal: CornixSignal,
    entry: AnyOrder,
) -> Exits:
    """Place the stop and the take-profits protecting what `entry` opens."""
    exits = Exits()
    instrument = venue.instrument(signal.symbol)
    mark = venue.quote(signal.symbol).mark_price
    long = signal.side == "buy"
    stop = check_stop(signal, instrument, mark)
    order = await place_stop_loss(
        uow, venue, principal, entry.portfolio_id, signal.symbol, long, stop, SOURCE, entry.id
    )
    exits.orders.append(order)
    exits.notes.append(f"stop-loss {plain(stop)} placed (conditional order {order.id})")
    if not signal.take_profits:
        return exits
    total = _protected(uow, entry)
    # Targets the price has already passed would trigger at once: kept out, their share with them.
    waiting = [
        price
        for price in (_on_tick(p, instrument) for p in signal.take_profits)
        if (price > mark if long else price < mark)
    ]
    passed = len(signal.take_profits) - len(waiting)
    if passed:
        exits.notes.append(f"{passed} take-profit(s) already passed by the price, not placed")
    if not waiting or total <= ZERO:
        return exits
    for number, (price, size) in enumerate(
        zip(waiting, split(total, len(waiting), instrument), strict=False), 1
    ):
        order = await conditional_service.place_in(
            uow,
            venue,
            principal,
            PlaceConditional(
                portfolio_id=entry.portfolio_id,
                symbol=signal.symbol,
                side=Side.SELL if long else Side.BUY,
                type=ConditionalType.TAKE_PROFIT_MARKET,
                trigger_price=price,
                quantity=size,
                reduce_only=True,
                working_type=WorkingType.MARK_PRICE,
                source=SOURCE,
                origin_order_id=entry.id,
            ),
        )
        exits.orders.append(order)
        exits.notes.append(
            f"take-profit {number} {plain(price)} for {plain(size)} placed (conditional order "
            f"{order.id})"
        )
    return exits


def _protected(uow: AsyncWork, entry: AnyOrder) -> Decimal:
    """The quantity the take-profits split: the position a market entry left, or what a limit
    entry will add when it fills."""
    if OrderType(entry.type) is OrderType.MARKET:
        state = workset.get(uow, entry.portfolio_id)
        position = state.positions.get(entry.symbol) if state is not None else None
        return abs(position.quantity) if position is not None else ZERO
    return Decimal(entry.quantity)
