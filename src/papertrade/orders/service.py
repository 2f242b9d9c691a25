"""Place, cancel and query orders; every surface calls these."""

import os
import random
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.db import AnySession
from papertrade.errors import NotFound
from papertrade.events import Event, after_commit, emit
from papertrade.kit.decimals import ZERO, money, plain
from papertrade.kit.time import now_ms
from papertrade.models import Order, Portfolio, Position
from papertrade.orders import ids, pending, workset
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.errors import DuplicateClientOrderId, OrderNotFound, OrderNotOpen
from papertrade.orders.fills import apply_fill
from papertrade.orders.pricing import fresh_quote, instrument_of
from papertrade.orders.record import OrderRecord
from papertrade.orders.views import order_event_data
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service as position_service
from papertrade.trading import margin
from papertrade.trading import orders as rules
from papertrade.trading import position as position_math
from papertrade.trading.enums import Action, Liquidity, OrderStatus, OrderType, Side
from papertrade.trading.errors import InvalidQuantity, ReduceOnlyRejected
from papertrade.trading.orders import Placement
from papertrade.trading.values import Instrument

# Generated client order ids need only be unique, not secret. A generator of our own, seeded once
# from the OS: nothing that reseeds the global `random` module (a test tool, a library) can make
# it repeat an id, and drawing from it makes no system call (os.urandom would hand the GIL away
# and wait to get it back, once per order, on SQLite's writer thread).
_CLIENT_IDS = random.Random(int.from_bytes(os.urandom(32)))


def _side_and_quantity(
    cmd: PlaceOrder, instrument: Instrument, position: Position, reference: Decimal
) -> tuple[Side, Decimal]:
    side = cmd.side
    if cmd.action is Action.CLOSE:
        reducing = rules.reducing_side(position.quantity)
        if reducing is None:
            raise ReduceOnlyRejected(f"There is no {cmd.symbol} position to close.")
        if cmd.strict_reduce_side and side is not None and side is not reducing:
            raise ReduceOnlyRejected(
                f"A reduce-only {side} order cannot reduce a position of "
                f"{plain(position.quantity)}."
            )
        side = reducing
    if side is None:
        raise InvalidQuantity("side is required for an opening order")
    if cmd.quantity is not None:
        quantity = cmd.quantity
    elif cmd.size_usd is not None:
        quantity = rules.quantity_from_size_usd(
            cmd.size_usd, reference, instrument.step_size, instrument.min_qty, instrument.tick_size
        )
    else:
        raise InvalidQuantity("give quantity (base units) or size_usd")
    if cmd.action is Action.CLOSE:
        quantity = rules.reduce_only_quantity(position.quantity, side, quantity)
    return side, quantity


async def place(
    session: AsyncSession, ctx: AppContext, principal: Principal, cmd: PlaceOrder
) -> OrderRecord:
    """Place an order inside an async unit of work (webhooks); see place_sync."""
    order = await session.run_sync(place_sync, ctx, principal, cmd)
    await session.run_sync(pending.write)  # later queries of this unit of work see the order
    return order


def place_sync(
    session: Session, ctx: AppContext, principal: Principal, cmd: PlaceOrder
) -> OrderRecord:
    """Validate, check margin, record, and fill at once when the order is marketable.

    Every check comes before the first change, so an order refused with an error leaves the unit
    of work as it found it and the group commit can go on with its neighbours. Synchronous, so a
    whole group of orders runs in one unit of work on SQLite's writer thread (orders/writer.py).
    """
    instrument = instrument_of(ctx.market, cmd.symbol)
    client_ids = [(cmd.portfolio_id, cmd.client_order_id)] if cmd.client_order_id else []
    workset.load(session, [cmd.portfolio_id], client_ids)
    state = workset.get(session, cmd.portfolio_id)
    portfolio = portfolio_service.check_owned(
        state.portfolio if state else None, principal, cmd.portfolio_id
    )
    assert state is not None
    mark = fresh_quote(ctx.market, cmd.symbol, ctx.settings.stale_after_ms).mark_price
    if cmd.client_order_id in state.taken_client_ids:
        raise DuplicateClientOrderId(
            f"client_order_id {cmd.client_order_id!r} is already used in this portfolio."
        )
    position = state.positions.get(instrument.symbol) or position_service.flat_position(
        portfolio.id, instrument, ctx.settings.default_leverage
    )
    reference = cmd.price if cmd.type is OrderType.LIMIT and cmd.price else mark
    side, quantity = _side_and_quantity(cmd, instrument, position, reference)
    reduce_only = cmd.action is Action.CLOSE
    rules.validate_order(instrument, side, cmd.type, quantity, cmd.price, reduce_only, mark=mark)
    placement = Placement.FILL
    if cmd.type is OrderType.LIMIT:
        assert cmd.price is not None
        placement = rules.limit_placement(
            side, cmd.time_in_force, cmd.price, mark, instrument.tick_size
        )

    reserved = ZERO
    if not reduce_only:
        opening = position_math.opening_quantity(position.quantity, side.sign * quantity)
        fill_price = mark if placement is Placement.FILL else reference
        new_notional = abs(position.quantity + side.sign * quantity) * fill_price
        margin.check_leverage(instrument, position.leverage, new_notional)
        required = margin.initial_margin(opening * fill_price, position.leverage)
        fee = quantity * fill_price * portfolio.taker_fee_rate
        account = margin.account_state(
            portfolio.balance,
            position_service.position_inputs(ctx.market, list(state.positions.values())),
            state.open_margin,
        )
        margin.ensure_margin(required + fee, account.available_balance_raw)
        if placement is Placement.REST:
            reserved = money(required)

    now = now_ms()
    client_order_id = cmd.client_order_id or f"pt-{_CLIENT_IDS.getrandbits(96):024x}"
    order = OrderRecord(
        id=ids.next_id(session),
        portfolio_id=portfolio.id,
        symbol=instrument.symbol,
        side=side.value,
        type=cmd.type.value,
        action=cmd.action.value,
        time_in_force=cmd.time_in_force.value,
        status=OrderStatus.NEW.value,
        is_open=False,
        quantity=quantity,
        size_usd=money(quantity * mark),
        price=cmd.price,
        avg_price=ZERO,
        filled_quantity=ZERO,
        filled_quote=ZERO,
        commission=ZERO,
        realized_pnl=ZERO,
        client_order_id=client_order_id,
        source=cmd.source,
        reject_reason=None,
        reserved_margin=reserved,
        created_at=now,
        updated_at=now,
        filled_at=None,
    )
    pending.of(session).orders.append(order)
    state.taken_client_ids.add(client_order_id)
    state.checked_client_ids.add(client_order_id)
    emit(session, Event("order.new", portfolio.id, order_event_data(order)))
    if placement is Placement.FILL:
        if position.symbol not in state.positions:
            session.add(position)
            state.positions[position.symbol] = position
        apply_fill(
            session,
            portfolio,
            position,
            order,
            price=mark,
            quantity=quantity,
            liquidity=Liquidity.TAKER,
        )
    elif placement is Placement.EXPIRE:
        order.status = OrderStatus.EXPIRED.value
        emit(session, Event("order.expired", portfolio.id, order_event_data(order)))
    else:
        order.is_open = True
        state.open_margin += reserved
        if ctx.engine is not None:
            engine = ctx.engine
            after_commit(session, lambda: engine.rest(order))
    return order


async def get_owned_order(
    session: AsyncSession, principal: Principal, order_id: int, *, for_update: bool = False
) -> tuple[Order, Portfolio]:
    """An order of one of the caller's portfolios; anything else is a 404."""
    statement = select(Order).where(Order.id == order_id)
    if for_update:
        statement = statement.with_for_update()
    order = await session.scalar(statement)
    if order is None:
        raise OrderNotFound("Order not found.")
    try:
        portfolio = await portfolio_service.get_owned(session, principal, order.portfolio_id)
    except NotFound as exc:
        raise OrderNotFound("Order not found.") from exc
    return order, portfolio


async def find_by_client_id(
    session: AsyncSession, principal: Principal, portfolio_id: int, client_order_id: str
) -> Order:
    await portfolio_service.get_owned(session, principal, portfolio_id)
    order = await session.scalar(
        select(Order).where(
            Order.portfolio_id == portfolio_id, Order.client_order_id == client_order_id
        )
    )
    if order is None:
        raise OrderNotFound("Order not found.")
    return order


async def cancel(
    session: AsyncSession, ctx: AppContext, principal: Principal, order: Order
) -> Order:
    """Cancel a resting order; a filled or already cancelled order cannot be."""
    await session.refresh(order, with_for_update=True)
    if not order.is_open:
        raise OrderNotOpen(
            f"Order {order.id} is {order.status}; only open orders can be cancelled."
        )
    mark_canceled(session, ctx, order)
    return order


def mark_canceled(session: AnySession, ctx: AppContext, order: Order) -> None:
    workset.release_margin(session, order)
    order.status = OrderStatus.CANCELED.value
    order.is_open = False
    order.reserved_margin = ZERO
    emit(session, Event("order.canceled", order.portfolio_id, order_event_data(order)))
    if ctx.engine is not None:
        engine, symbol, order_id = ctx.engine, order.symbol, order.id
        after_commit(session, lambda: engine.unrest(symbol, order_id))


async def cancel_all(
    session: AsyncSession, ctx: AppContext, portfolio_id: int, symbol: str | None = None
) -> list[Order]:
    """Cancel every open order of a portfolio (optionally one symbol)."""
    statement = select(Order).where(Order.portfolio_id == portfolio_id, Order.is_open.is_(True))
    if symbol is not None:
        statement = statement.where(Order.symbol == symbol)
    orders = list(await session.scalars(statement.with_for_update()))
    for order in orders:
        mark_canceled(session, ctx, order)
    return orders


async def list_orders(
    session: AsyncSession,
    portfolio_id: int,
    *,
    status: str = "all",
    symbol: str | None = None,
    before_id: int | None = None,
    limit: int = 100,
) -> Sequence[Order]:
    """Newest first; `before_id` pages backwards."""
    statement = select(Order).where(Order.portfolio_id == portfolio_id)
    if status == "open":
        statement = statement.where(Order.is_open.is_(True))
    elif status == "closed":
        statement = statement.where(Order.is_open.is_(False))
    if symbol is not None:
        statement = statement.where(Order.symbol == symbol)
    if before_id is not None:
        statement = statement.where(Order.id < before_id)
    return (await session.scalars(statement.order_by(Order.id.desc()).limit(limit))).all()
