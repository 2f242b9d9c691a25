"""Place, cancel and query orders; every surface calls these."""

from collections.abc import Sequence
from dataclasses import replace
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from papertrade.auth.principal import Principal
from papertrade.errors import NotFound, PapertradeError
from papertrade.kit.decimals import ZERO, money, plain
from papertrade.models import Order, Portfolio, Position
from papertrade.orders import ids, workset
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.errors import DuplicateClientOrderId, OrderNotFound, OrderNotOpen
from papertrade.orders.fills import apply_fill
from papertrade.orders.lifecycle import accept, new_order, transition
from papertrade.orders.pricing import Venue
from papertrade.orders.record import OrderRecord
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service as position_service
from papertrade.tiers import limits as tier_limits
from papertrade.tiers.limits import TierLimit
from papertrade.trading import margin, realism
from papertrade.trading import orders as rules
from papertrade.trading import position as position_math
from papertrade.trading.enums import Action, Liquidity, OrderStatus, OrderType, PositionSide, Side
from papertrade.trading.errors import (
    InvalidQuantity,
    PositionSideMismatch,
    ReduceOnlyInHedgeMode,
    ReduceOnlyRejected,
    TradingRuleError,
)
from papertrade.trading.orders import Placement
from papertrade.trading.realism import Realism
from papertrade.trading.values import Instrument, Quote
from papertrade.uow import AsyncWork, SyncWork


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


def _hedge_command(cmd: PlaceOrder) -> PlaceOrder:
    """A hedge-mode order as the one-way path knows it: against its LONG or SHORT position, an
    order on the position's closing side closes (capped at the position, never flipping it)."""
    position_side = cmd.position_side
    if cmd.reduce_only_sent:
        raise ReduceOnlyInHedgeMode(
            "reduceOnly is not used in hedge mode: close with the position's side "
            "(SELL for LONG, BUY for SHORT)."
        )
    if position_side is PositionSide.BOTH:
        raise PositionSideMismatch(
            "The portfolio is in hedge mode: an order names the LONG or SHORT position."
        )
    if position_side is None:  # a surface that did not say: what the direction implies
        if cmd.side is None:
            raise PositionSideMismatch(
                "The portfolio is in hedge mode: name the position to close, LONG or SHORT."
            )
        closing = cmd.action is Action.CLOSE
        buys_long = (cmd.side is Side.BUY) != closing
        position_side = PositionSide.LONG if buys_long else PositionSide.SHORT
    closing_side = position_side.closing_side
    if cmd.action is Action.CLOSE and cmd.side not in (None, closing_side):
        raise ReduceOnlyRejected(
            f"A {cmd.side} order cannot close the {position_side} position; {closing_side} does."
        )
    closes = cmd.action is Action.CLOSE or cmd.side is closing_side
    return replace(
        cmd,
        position_side=position_side,
        side=closing_side if closes else cmd.side,
        action=Action.CLOSE if closes else Action.OPEN,
        strict_reduce_side=True,
    )


def place_all(
    uow: SyncWork, venue: Venue, requests: Sequence[tuple[Principal, PlaceOrder]]
) -> list[OrderRecord | PapertradeError | TradingRuleError]:
    """Place every order of `requests` in one unit of work: the one way orders are placed (the
    order writer's groups, signals, and later copy trading and strategies all call it).

    What a group shares is loaded once: the portfolios, their positions and reserved margin, and
    whether the client order ids are taken. An order refused by a rule is refused alone (its
    answer is the error) and its neighbours go on.
    """
    commands = [cmd for _, cmd in requests]
    workset.load(
        uow,
        {cmd.portfolio_id for cmd in commands},
        [(cmd.portfolio_id, cmd.client_order_id) for cmd in commands if cmd.client_order_id],
    )
    ids.reserve(uow, len(commands))
    read_only = (
        tier_limits.read_only_portfolios(
            uow.session, {cmd.portfolio_id for cmd in commands}, uow.now()
        )
        if venue.tiers_enforced
        else {}
    )
    outcomes: list[OrderRecord | PapertradeError | TradingRuleError] = []
    # One fresh quote per symbol for the whole group: its orders are judged at the same price,
    # and a large group (a tick triggering thousands of stops) cannot outlive its own quote.
    quotes: dict[str, Quote] = {}
    for principal, cmd in requests:
        try:
            outcomes.append(_place(uow, venue, principal, cmd, quotes, read_only))
        except (PapertradeError, TradingRuleError) as refused:
            outcomes.append(refused)
    return outcomes


async def place_one(
    uow: AsyncWork, venue: Venue, principal: Principal, cmd: PlaceOrder
) -> OrderRecord:
    """Place one order inside an async unit of work (signals); a refusal is raised. Later queries
    of this unit of work see the order."""

    def run(session: Session) -> OrderRecord:
        work = uow.on(session)
        (outcome,) = place_all(work, venue, [(principal, cmd)])
        work.before_commit(session)
        if not isinstance(outcome, OrderRecord):
            raise outcome
        return outcome

    return await uow.session.run_sync(run)


def _place(
    uow: SyncWork,
    venue: Venue,
    principal: Principal,
    cmd: PlaceOrder,
    quotes: dict[str, Quote],
    read_only: dict[int, TierLimit] | None = None,
) -> OrderRecord:
    """Validate, check margin, record, and fill at once when the order is marketable.

    Every check comes before the first change, so an order refused with an error leaves the unit
    of work as it found it and the group can go on with its neighbours. Synchronous, so a whole
    group of orders runs in one unit of work on SQLite's writer thread (orders/writer.py).
    """
    instrument = venue.instrument(cmd.symbol)
    client_ids = [(cmd.portfolio_id, cmd.client_order_id)] if cmd.client_order_id else []
    workset.load(uow, [cmd.portfolio_id], client_ids)
    state = workset.get(uow, cmd.portfolio_id)
    portfolio = portfolio_service.check_owned(
        state.portfolio if state else None, principal, cmd.portfolio_id
    )
    assert state is not None
    refused = (read_only or {}).get(portfolio.id)
    if refused is not None and cmd.action is not Action.CLOSE:  # closing stays possible
        raise refused
    quote = quotes.get(cmd.symbol)
    if quote is None:
        quote = quotes[cmd.symbol] = venue.quote(cmd.symbol)
    mark = quote.mark_price
    if cmd.client_order_id in state.taken_client_ids:
        raise DuplicateClientOrderId(
            f"client_order_id {cmd.client_order_id!r} is already used in this portfolio."
        )
    key = instrument.symbol
    if portfolio.dual_side_position:
        cmd = _hedge_command(cmd)
        assert cmd.position_side is not None
        key = position_service.position_key(key, cmd.position_side)
    elif cmd.position_side not in (None, PositionSide.BOTH):
        raise PositionSideMismatch(
            "The portfolio is in one-way mode: the position side is BOTH "
            "(switch to hedge mode for LONG and SHORT positions)."
        )
    position = state.positions.get(key) or position_service.flat_position(
        portfolio.id,
        instrument,
        venue.default_leverage,
        cmd.position_side or PositionSide.BOTH,
        like=position_service.sibling(state.positions, instrument.symbol),
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

    # A taker's price under the portfolio's realism profile (the mark itself by default).
    profile = Realism(portfolio.realism)
    taker = realism.taker_price(
        profile,
        side,
        mark,
        quantity,
        instrument.tick_size,
        realism.depth_usdt(instrument.symbol),
        limit=cmd.price if cmd.type is OrderType.LIMIT else None,
    )
    reserved = ZERO
    if not reduce_only:
        opening = position_math.opening_quantity(position.quantity, side.sign * quantity)
        fill_price = taker.price if placement is Placement.FILL else reference
        new_notional = abs(position.quantity + side.sign * quantity) * fill_price
        margin.check_leverage(instrument, position.leverage, new_notional)
        required = margin.initial_margin(opening * fill_price, position.leverage)
        fee = quantity * fill_price * portfolio.taker_fee_rate
        account = margin.account_state(
            portfolio.balance,
            position_service.position_inputs(venue.market, list(state.positions.values())),
            state.open_margin,
        )
        margin.ensure_margin(required + fee, account.available_balance_raw)
        if placement is Placement.REST:
            reserved = money(required)

    order = new_order(
        uow,
        portfolio_id=portfolio.id,
        symbol=instrument.symbol,
        side=side,
        type=cmd.type,
        action=cmd.action,
        quantity=quantity,
        mark=mark,
        price=cmd.price,
        time_in_force=cmd.time_in_force,
        client_order_id=cmd.client_order_id,
        source=cmd.source,
        reserved_margin=reserved,
        position_side=position.position_side,
    )
    state.taken_client_ids.add(order.client_order_id)
    state.checked_client_ids.add(order.client_order_id)
    resting = placement is Placement.REST
    accept(uow, order, resting=resting)
    if resting:
        state.open_margin += reserved
    elif placement is Placement.FILL:
        if key not in state.positions:
            uow.session.add(position)
            state.positions[key] = position
        apply_fill(
            uow,
            portfolio,
            position,
            order,
            price=taker.price,
            quantity=quantity,
            liquidity=Liquidity.TAKER,
            mark=mark,
            latency_ms=realism.LATENCY_MS[profile],
        )
    else:
        transition(
            uow,
            order,
            OrderStatus.EXPIRED,
            f"IOC: the limit {plain(order.price or ZERO)} was not reachable at the mark "
            f"{plain(mark)}",
        )
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


async def cancel(uow: AsyncWork, order: Order) -> Order:
    """Cancel a resting order; a filled or already cancelled order cannot be."""
    await uow.session.refresh(order, with_for_update=True)
    if not order.is_open:
        raise OrderNotOpen(
            f"Order {order.id} is {order.status}; only open orders can be cancelled."
        )
    transition(uow, order, OrderStatus.CANCELED, "canceled by the user")
    return order


async def cancel_all(uow: AsyncWork, portfolio_id: int, symbol: str | None = None) -> list[Order]:
    """Cancel every open order of a portfolio (optionally one symbol)."""
    statement = select(Order).where(Order.portfolio_id == portfolio_id, Order.is_open.is_(True))
    if symbol is not None:
        statement = statement.where(Order.symbol == symbol)
    orders = list(await uow.session.scalars(statement.with_for_update()))
    for order in orders:
        transition(uow, order, OrderStatus.CANCELED, "canceled by the user (all open orders)")
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
