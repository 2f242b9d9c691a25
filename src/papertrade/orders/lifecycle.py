"""An order's life: the one factory that makes an order and the one function that moves it.

Every order (placed by any surface, a signal, and later copy trading and strategies, or made by
the engine to liquidate) is made by new_order, and every change of its status goes through
transition, which checks the kernel's transition table and keeps the order's open flag, its
reserved margin and its event in step with the status.
"""

import os
import random
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from papertrade.kit.decimals import ZERO, money
from papertrade.orders import ids, workset
from papertrade.orders.events import (
    OrderAccepted,
    OrderCanceled,
    OrderEvent,
    OrderExpired,
    OrderFilled,
    OrderFillEvent,
    OrderPartiallyFilled,
    OrderRejected,
)
from papertrade.orders.pending import OrderRows
from papertrade.orders.record import AnyOrder, OrderRecord
from papertrade.orders.views import order_event_data
from papertrade.trading.enums import (
    Action,
    OrderStatus,
    OrderType,
    Side,
    TimeInForce,
    can_transition,
)
from papertrade.uow import AnyWork, SyncWork

# Generated client order ids need only be unique, not secret. A generator of our own, seeded once
# from the OS: nothing that reseeds the global `random` module (a test tool, a library) can make
# it repeat an id, and drawing from it makes no system call (os.urandom would hand the GIL away
# and wait to get it back, once per order, on SQLite's writer thread).
_CLIENT_IDS = random.Random(int.from_bytes(os.urandom(32)))
# A process forked after import (a fork server, a pre-loading process manager) would otherwise
# draw the very ids its parent and siblings draw: seeded again in every child, as `random`'s own.
os.register_at_fork(after_in_child=lambda: _CLIENT_IDS.seed(int.from_bytes(os.urandom(32))))

_EVENTS: dict[OrderStatus, type[OrderEvent]] = {
    OrderStatus.PARTIALLY_FILLED: OrderPartiallyFilled,
    OrderStatus.FILLED: OrderFilled,
    OrderStatus.CANCELED: OrderCanceled,
    OrderStatus.EXPIRED: OrderExpired,
    OrderStatus.REJECTED: OrderRejected,
}


_FILL_EVENTS: dict[OrderStatus, type[OrderFillEvent]] = {
    OrderStatus.PARTIALLY_FILLED: OrderPartiallyFilled,
    OrderStatus.FILLED: OrderFilled,
}


class IllegalTransition(RuntimeError):
    """A bug: code tried to move an order in a way the kernel's table forbids."""


def generated_client_id() -> str:
    """The client order id of an order sent without one."""
    return f"pt-{_CLIENT_IDS.getrandbits(96):024x}"


def new_order(
    uow: SyncWork,
    *,
    portfolio_id: int,
    symbol: str,
    side: Side,
    type: OrderType,
    action: Action,
    quantity: Decimal,
    mark: Decimal,
    price: Decimal | None = None,
    time_in_force: TimeInForce = TimeInForce.GTC,
    client_order_id: str | None = None,
    source: str,
    reserved_margin: Decimal = ZERO,
    position_side: str = "BOTH",
) -> OrderRecord:
    """A new order in status NEW, written with the unit of work's other orders at its commit."""
    now = uow.now()
    order = OrderRecord(
        id=ids.next_id(uow),
        portfolio_id=portfolio_id,
        symbol=symbol,
        side=side.value,
        type=type.value,
        action=action.value,
        position_side=position_side,
        time_in_force=time_in_force.value,
        status=OrderStatus.NEW.value,
        is_open=False,
        quantity=quantity,
        size_usd=money(quantity * mark),
        price=price,
        avg_price=ZERO,
        filled_quantity=ZERO,
        filled_quote=ZERO,
        commission=ZERO,
        realized_pnl=ZERO,
        client_order_id=client_order_id or generated_client_id(),
        source=source,
        reject_reason=None,
        reserved_margin=reserved_margin,
        created_at=now,
        updated_at=now,
        filled_at=None,
    )
    uow.part(OrderRows).orders.append(order)
    return order


def accept(uow: AnyWork, order: AnyOrder, *, resting: bool) -> None:
    """Announce a new order; `resting`: it waits in the book (the engine picks it up)."""
    order.is_open = resting
    uow.emit(
        OrderAccepted(
            portfolio_id=order.portfolio_id, order=order_event_data(order), resting=resting
        )
    )


def transition(
    uow: AnyWork,
    order: AnyOrder,
    status: OrderStatus,
    reason: str | None = None,
    *,
    fill: Mapping[str, Any] | None = None,
) -> None:
    """Move `order` to `status` and announce it; an order that stops resting gives back the
    margin it reserved. `reason`: why it was cancelled, expired or rejected (order history);
    `fill`: the execution that moved it (a fill event carries it)."""
    if not can_transition(OrderStatus(order.status), status):
        raise IllegalTransition(f"order {order.id}: {order.status} -> {status.value}")
    order.status = status.value
    if reason is not None:
        order.reject_reason = reason[:200]
    order.updated_at = uow.now()
    if status.is_terminal:
        workset.release_margin(uow, order)
        order.is_open = False
        order.reserved_margin = ZERO
    data = order_event_data(order)
    if fill is not None:
        uow.emit(_FILL_EVENTS[status](portfolio_id=order.portfolio_id, order=data, fill=fill))
        return
    uow.emit(_EVENTS[status](portfolio_id=order.portfolio_id, order=data))
