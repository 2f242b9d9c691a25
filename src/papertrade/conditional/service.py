"""Place, cancel, list and trigger conditional orders.

Placing checks everything an order would be checked for when it triggers that can be known now
(the filters, the trigger's direction), but reserves no margin: like Binance, the margin is
checked when the order it places is placed. Triggering places that order through
`orders.service.place_all`, the one way orders are placed.
"""

from collections.abc import MutableMapping, Sequence
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from papertrade.auth.principal import Principal
from papertrade.conditional import record
from papertrade.conditional.commands import PlaceConditional
from papertrade.conditional.errors import (
    ConditionalNotFound,
    ConditionalNotOpen,
    DuplicateClientAlgoId,
)
from papertrade.conditional.events import (
    ConditionalCanceled,
    ConditionalPlaced,
    ConditionalRejected,
    ConditionalTriggered,
)
from papertrade.conditional.record import ConditionalRecord
from papertrade.conditional.views import conditional_data
from papertrade.errors import NotFound
from papertrade.kit.decimals import ZERO
from papertrade.models import ConditionalOrder, Portfolio, Position
from papertrade.orders import ids, origin, workset
from papertrade.orders import service as order_service
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.events import OrderEvent
from papertrade.orders.pricing import Venue
from papertrade.orders.record import OrderRecord
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service as position_service
from papertrade.trading import conditional as rules
from papertrade.trading import orders as order_rules
from papertrade.trading.conditional import ConditionalStatus, ConditionalType, WorkingType
from papertrade.trading.enums import Action, OrderStatus, PositionSide, Side, TimeInForce
from papertrade.trading.errors import (
    PositionSideMismatch,
    ReduceOnlyInHedgeMode,
    ReduceOnlyRejected,
)
from papertrade.trading.values import Quote
from papertrade.uow import AnyWork, AsyncWork, SyncWork

CHUNK = 500


def watched_price(working_type: str, quote: Quote) -> Decimal:
    """The price a trigger of this working type watches."""
    if working_type == WorkingType.MARK_PRICE:
        return quote.mark_price
    return quote.last_price


def place(
    uow: SyncWork, venue: Venue, principal: Principal, cmd: PlaceConditional
) -> ConditionalOrder:
    """Record a conditional order; the engine watches its trigger from the commit on."""
    session = uow.session
    instrument = venue.instrument(cmd.symbol)
    portfolio = portfolio_service.check_owned(
        session.get(Portfolio, cmd.portfolio_id), principal, cmd.portfolio_id
    )
    quote = venue.quote(instrument.symbol)
    rules.validate(
        kind=cmd.type,
        side=cmd.side,
        trigger_price=cmd.trigger_price,
        price=cmd.price,
        callback_rate=cmd.callback_rate,
        activation_price=cmd.activation_price,
        current=watched_price(cmd.working_type, quote),
        tick_size=instrument.tick_size,
    )
    if cmd.close_position:
        if cmd.quantity is not None:
            raise rules.InvalidConditional("close_position closes the whole position; no quantity")
    else:
        if cmd.quantity is None:
            raise rules.InvalidConditional("give a quantity, or close_position")
        reference = cmd.price or cmd.trigger_price or cmd.activation_price or quote.mark_price
        order_rules.validate_order(
            instrument,
            cmd.side,
            cmd.type.order_type,
            cmd.quantity,
            cmd.price,
            cmd.reduce_only,
            mark=reference,
        )
    if cmd.price is not None:
        order_rules.validate_order(
            instrument, cmd.side, cmd.type.order_type, instrument.min_qty, cmd.price, True
        )
    client_id = cmd.client_algo_id
    if client_id is not None and session.scalar(
        select(ConditionalOrder.id).where(
            ConditionalOrder.portfolio_id == cmd.portfolio_id,
            ConditionalOrder.client_algo_id == client_id,
        )
    ):
        raise DuplicateClientAlgoId(f"client_algo_id {client_id!r} is already used.")
    now = uow.now()
    order_id = ids.next_id(uow)
    row = ConditionalOrder(
        id=order_id,
        portfolio_id=cmd.portfolio_id,
        symbol=instrument.symbol,
        side=cmd.side.value,
        type=cmd.type.value,
        working_type=cmd.working_type.value,
        trigger_price=cmd.trigger_price,
        price=cmd.price,
        quantity=cmd.quantity,
        close_position=cmd.close_position,
        reduce_only=cmd.reduce_only or cmd.close_position or _closes_hedge(portfolio, cmd),
        price_protect=cmd.price_protect,
        callback_rate=cmd.callback_rate,
        activation_price=cmd.activation_price,
        time_in_force=cmd.time_in_force.value,
        status=ConditionalStatus.NEW.value,
        is_open=True,
        client_algo_id=client_id or f"pt-algo-{order_id}",
        position_side=_position_side(portfolio, cmd),
        source=cmd.source,
        origin_order_id=cmd.origin_order_id,
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    session.flush()
    uow.emit(ConditionalPlaced(portfolio_id=row.portfolio_id, conditional=conditional_data(row)))
    return row


def _position_side(portfolio: Portfolio, cmd: PlaceConditional) -> str:
    """The position a conditional order will trade, checked against the portfolio's mode now
    (the order it places is checked again when it triggers)."""
    wanted = cmd.position_side
    if not portfolio.dual_side_position:
        if wanted not in (None, PositionSide.BOTH):
            raise PositionSideMismatch(
                "The portfolio is in one-way mode: the position side is BOTH."
            )
        return PositionSide.BOTH.value
    if wanted is PositionSide.BOTH:
        raise PositionSideMismatch("The portfolio is in hedge mode: name LONG or SHORT.")
    if cmd.reduce_only and not cmd.close_position and cmd.position_side is not None:
        raise ReduceOnlyInHedgeMode(
            "reduceOnly is not used in hedge mode: close with the position's side "
            "(SELL for LONG, BUY for SHORT)."
        )
    if wanted is None:  # what the direction implies: a reduce-only sell closes the LONG position
        closing = cmd.reduce_only or cmd.close_position
        wanted = PositionSide.LONG if (cmd.side is Side.BUY) != closing else PositionSide.SHORT
    if (cmd.reduce_only or cmd.close_position) and cmd.side is not wanted.closing_side:
        raise ReduceOnlyRejected(f"A {cmd.side} order cannot close the {wanted} position.")
    return wanted.value


def _closes_hedge(portfolio: Portfolio, cmd: PlaceConditional) -> bool:
    """A hedge-mode order on its position's closing side closes it (kept as reduce-only, so the
    position's closing cancels it with the other TP/SL)."""
    side = cmd.position_side
    return portfolio.dual_side_position and side is not None and cmd.side is side.closing_side


def _close(
    uow: AnyWork,
    row: ConditionalOrder | ConditionalRecord,
    status: ConditionalStatus,
    reason: str | None,
) -> None:
    row.status = status.value
    row.is_open = False
    row.reason = reason
    row.updated_at = uow.now()
    event = {
        ConditionalStatus.CANCELED: ConditionalCanceled,
        ConditionalStatus.TRIGGERED: ConditionalTriggered,
    }.get(status, ConditionalRejected)
    uow.emit(event(portfolio_id=row.portfolio_id, conditional=conditional_data(row)))


async def get_owned(
    session: AsyncSession, principal: Principal, conditional_id: int, *, for_update: bool = False
) -> ConditionalOrder:
    """A conditional order of one of the caller's portfolios; anything else is a 404."""
    statement = select(ConditionalOrder).where(ConditionalOrder.id == conditional_id)
    if for_update:
        statement = statement.with_for_update()
    row = await session.scalar(statement)
    if row is None:
        raise ConditionalNotFound("Conditional order not found.")
    try:
        await portfolio_service.get_owned(session, principal, row.portfolio_id)
    except NotFound as exc:
        raise ConditionalNotFound("Conditional order not found.") from exc
    return row


async def find_by_client_id(
    session: AsyncSession, principal: Principal, portfolio_id: int, client_algo_id: str
) -> ConditionalOrder:
    await portfolio_service.get_owned(session, principal, portfolio_id)
    row = await session.scalar(
        select(ConditionalOrder).where(
            ConditionalOrder.portfolio_id == portfolio_id,
            ConditionalOrder.client_algo_id == client_algo_id,
        )
    )
    if row is None:
        raise ConditionalNotFound("Conditional order not found.")
    return row


async def cancel(uow: AsyncWork, row: ConditionalOrder) -> ConditionalOrder:
    """Cancel a conditional order that has not triggered."""
    await uow.session.refresh(row, with_for_update=True)
    if not row.is_open:
        raise ConditionalNotOpen(
            f"Conditional order {row.id} is {row.status}; only waiting ones can be cancelled."
        )
    _close(uow, row, ConditionalStatus.CANCELED, "canceled by the user")
    return row


async def cancel_all(
    uow: AsyncWork,
    portfolio_id: int,
    symbol: str | None = None,
    reason: str = "canceled by the user",
) -> list[ConditionalOrder]:
    """Cancel every waiting conditional order of a portfolio (optionally one symbol)."""
    statement = select(ConditionalOrder).where(
        ConditionalOrder.portfolio_id == portfolio_id, ConditionalOrder.is_open.is_(True)
    )
    if symbol is not None:
        statement = statement.where(ConditionalOrder.symbol == symbol)
    rows = list(await uow.session.scalars(statement.with_for_update()))
    for row in rows:
        _close(uow, row, ConditionalStatus.CANCELED, reason)
    return rows


async def list_conditional(
    session: AsyncSession,
    portfolio_id: int,
    *,
    status: str = "all",
    symbol: str | None = None,
    before_id: int | None = None,
    limit: int = 100,
) -> Sequence[ConditionalOrder]:
    """Newest first; `before_id` pages backwards."""
    statement = select(ConditionalOrder).where(ConditionalOrder.portfolio_id == portfolio_id)
    if status == "open":
        statement = statement.where(ConditionalOrder.is_open.is_(True))
    elif status == "closed":
        statement = statement.where(ConditionalOrder.is_open.is_(False))
    if symbol is not None:
        statement = statement.where(ConditionalOrder.symbol == symbol)
    if before_id is not None:
        statement = statement.where(ConditionalOrder.id < before_id)
    statement = statement.order_by(ConditionalOrder.id.desc()).limit(limit)
    return (await session.scalars(statement)).all()


def trigger(
    uow: SyncWork, venue: Venue, conditional_ids: Sequence[int], levels: dict[int, Decimal]
) -> list[ConditionalRecord]:
    """Place the orders of conditional orders whose trigger was reached, in one unit of work.

    `levels` gives the trigger level a trailing stop reached (its trigger moves with the price).
    One whose order is refused (margin, filters, nothing to reduce) is closed as rejected with
    the reason; the others go on. A position closed by one of a position's TP/SL cancels the
    other (one-cancels-other).

    Batched for a tick that triggers thousands: the rows are read as plain records in a few
    chunked SELECTs, every order goes through one `place_all` (bulk inserts of orders, fills and
    ledger rows), and the rows' new state goes back in one multi-row UPDATE.
    """
    session = uow.session
    ids = list(conditional_ids)
    if session.get_bind().dialect.name == "postgresql":
        # Their portfolios before the rows, the order of every other path that changes a
        # portfolio's stops (a webhook's close, cancelling all open orders, the one-cancels-
        # other below): the other way round they deadlocked. SQLite has one writer: no order
        # to keep, and no extra read.
        workset.load(uow, record.portfolios_of(session, ids, CHUNK))
    rows = record.load_open(session, ids, CHUNK)
    if not rows:
        return []
    # The changes of the orders' rows go back once, at the commit, not at each query.
    with session.no_autoflush:
        return _trigger(uow, venue, rows, levels)


def _trigger(
    uow: SyncWork, venue: Venue, rows: list[ConditionalRecord], levels: dict[int, Decimal]
) -> list[ConditionalRecord]:
    session = uow.session
    portfolio_ids = sorted({row.portfolio_id for row in rows})
    workset.load(uow, portfolio_ids)
    requests: list[tuple[Principal, PlaceOrder]] = []
    placing: list[ConditionalRecord] = []
    principals: dict[int, Principal] = {}
    now = uow.now()
    for row in rows:
        row.triggered_at = now
        if row.id in levels:
            row.trigger_price = levels[row.id]
        state = workset.get(uow, row.portfolio_id)
        if state is None or state.portfolio.deleted_at is not None:
            _close(uow, row, ConditionalStatus.REJECTED, "the portfolio no longer exists")
            continue
        quantity = row.quantity
        key = position_service.position_key(row.symbol, row.position_side)
        if row.close_position:
            position = state.positions.get(key)
            quantity = abs(position.quantity) if position is not None else ZERO
            if quantity == ZERO:
                _close(uow, row, ConditionalStatus.EXPIRED, "there was no position to close")
                continue
        kind = ConditionalType(row.type)
        principal = principals.get(row.portfolio_id)
        if principal is None:
            principal = principals[row.portfolio_id] = Principal(
                kind="session", user_id=state.portfolio.user_id, credential_id=0
            )
        command = PlaceOrder(
            portfolio_id=row.portfolio_id,
            symbol=row.symbol,
            side=Side(row.side),
            type=kind.order_type,
            action=Action.CLOSE if row.reduce_only else Action.OPEN,
            quantity=quantity,
            price=row.price,
            time_in_force=TimeInForce(row.time_in_force),
            source=row.source,
            strict_reduce_side=True,
            position_side=PositionSide(row.position_side),
        )
        requests.append((principal, command))
        placing.append(row)
    outcomes = order_service.place_all(uow, venue, requests)
    flattened: set[tuple[int, str, str]] = set()
    for row, outcome in zip(placing, outcomes, strict=True):
        if isinstance(outcome, OrderRecord):
            row.actual_order_id = outcome.id
            _close(uow, row, ConditionalStatus.TRIGGERED, None)
            if row.reduce_only and outcome.status == OrderStatus.FILLED.value:
                state = workset.get(uow, row.portfolio_id)
                key = position_service.position_key(row.symbol, outcome.position_side)
                position = state.positions.get(key) if state else None
                if position is None or position.quantity == ZERO:
                    flattened.add((row.portfolio_id, row.symbol, outcome.position_side))
        else:
            reason = getattr(outcome, "message", str(outcome))
            _close(uow, row, ConditionalStatus.REJECTED, str(reason)[:200])
    _say_who_placed(uow, placing)
    # Written now, so the one-cancels-other query below sees these rows closed.
    record.write_back(session, rows)
    for portfolio_id, symbol, position_side in sorted(flattened):
        cancel_closing(uow, session, portfolio_id, symbol, position_side)
    return rows


def _say_who_placed(uow: SyncWork, placing: list[ConditionalRecord]) -> None:
    """The events of the orders these conditional orders placed say so ("stop-loss"), so the
    WebSocket, the toast and the inbox tell a triggered stop from the user's own order."""
    placed = {row.actual_order_id: row for row in placing if row.actual_order_id is not None}
    if not placed:
        return
    for event in uow.events:
        if isinstance(event, OrderEvent) and event.order_id in placed:
            row = placed[event.order_id]
            data = cast(MutableMapping[str, Any], event.order)
            origin.annotate(data, origin.of_conditional(row), row.id)


async def place_in(
    uow: AsyncWork, venue: Venue, principal: Principal, cmd: PlaceConditional
) -> ConditionalOrder:
    """place() inside an async unit of work (signals, an entry with TP/SL attached)."""
    return await uow.session.run_sync(lambda session: place(uow.on(session), venue, principal, cmd))


async def cancel_closing_in(
    uow: AsyncWork, portfolio_id: int, symbol: str, position_side: str | None = None
) -> list[ConditionalOrder]:
    """cancel_closing() inside an async unit of work."""
    return await uow.session.run_sync(
        lambda session: cancel_closing(
            uow.on(session), session, portfolio_id, symbol, position_side
        )
    )


def cancel_closing(
    uow: AnyWork,
    session: Session,
    portfolio_id: int,
    symbol: str,
    position_side: str | None = None,
) -> list[ConditionalOrder]:
    """The position is closed: the TP/SL still waiting to close it are cancelled (in hedge
    mode, those of that position side only)."""
    statement = select(ConditionalOrder).where(
        ConditionalOrder.portfolio_id == portfolio_id,
        ConditionalOrder.symbol == symbol,
        ConditionalOrder.is_open.is_(True),
        ConditionalOrder.reduce_only.is_(True),
    )
    if position_side is not None and position_side != PositionSide.BOTH:
        statement = statement.where(ConditionalOrder.position_side == position_side)
    # is_open again in memory: the unit of work may have just closed some (not yet flushed).
    rows = [row for row in session.scalars(statement.with_for_update()) if row.is_open]
    for row in rows:
        _close(uow, row, ConditionalStatus.CANCELED, "the position was closed (one-cancels-other)")
    return rows


def attached(
    portfolio_id: int,
    symbol: str,
    exit_side: Side,
    *,
    take_profit: Decimal | None,
    stop_loss: Decimal | None,
    working_type: WorkingType,
    source: str,
    position_side: PositionSide | None = None,
) -> list[PlaceConditional]:
    """The TP/SL pair of a position (or of an entry): market orders closing the whole position,
    a take-profit on the profitable side and a stop-loss on the other."""
    wanted = [
        (ConditionalType.TAKE_PROFIT_MARKET, take_profit),
        (ConditionalType.STOP_MARKET, stop_loss),
    ]
    return [
        PlaceConditional(
            portfolio_id=portfolio_id,
            symbol=symbol,
            side=exit_side,
            type=kind,
            trigger_price=trigger,
            close_position=True,
            working_type=working_type,
            source=source,
            position_side=position_side,
        )
        for kind, trigger in wanted
        if trigger is not None
    ]


def check_attached(venue: Venue, commands: Sequence[PlaceConditional]) -> None:
    """Refuse TP/SL that would trigger at once, before the entry they belong to is placed."""
    for cmd in commands:
        instrument = venue.instrument(cmd.symbol)
        rules.validate(
            kind=cmd.type,
            side=cmd.side,
            trigger_price=cmd.trigger_price,
            price=None,
            callback_rate=cmd.callback_rate,
            activation_price=cmd.activation_price,
            current=watched_price(cmd.working_type, venue.quote(cmd.symbol)),
            tick_size=instrument.tick_size,
        )


def set_position_tpsl(
    uow: SyncWork,
    venue: Venue,
    principal: Principal,
    portfolio_id: int,
    symbol: str,
    *,
    take_profit: Decimal | None,
    stop_loss: Decimal | None,
    working_type: WorkingType,
    source: str,
    position_side: PositionSide | None = None,
) -> list[ConditionalOrder]:
    """Replace the TP/SL of an open position (neither: remove them). In hedge mode the position
    is the side named, or the only side open."""
    session = uow.session
    # The portfolio before its conditional rows, as a trigger takes them (see trigger).
    portfolio = session.get(Portfolio, portfolio_id, with_for_update=True, populate_existing=True)
    portfolio_service.check_owned(portfolio, principal, portfolio_id)
    assert portfolio is not None  # check_owned raised otherwise
    instrument = venue.instrument(symbol)
    position = _position_to_protect(session, portfolio, instrument.symbol, position_side)
    exit_side = order_rules.reducing_side(position.quantity if position else ZERO)
    if position is None or exit_side is None:
        named = f" {position_side.value}" if position_side else ""
        raise ReduceOnlyRejected(f"There is no {instrument.symbol}{named} position to protect.")
    statement = select(ConditionalOrder).where(
        ConditionalOrder.portfolio_id == portfolio_id,
        ConditionalOrder.symbol == instrument.symbol,
        ConditionalOrder.position_side == position.position_side,
        ConditionalOrder.is_open.is_(True),
        ConditionalOrder.close_position.is_(True),
    )
    for row in session.scalars(statement.with_for_update()):
        _close(uow, row, ConditionalStatus.CANCELED, "replaced by the position's new TP/SL")
    commands = attached(
        portfolio_id,
        instrument.symbol,
        exit_side,
        take_profit=take_profit,
        stop_loss=stop_loss,
        working_type=working_type,
        source=source,
        position_side=PositionSide(position.position_side),
    )
    return [place(uow, venue, principal, cmd) for cmd in commands]


def _position_to_protect(
    session: Session, portfolio: Portfolio, symbol: str, position_side: PositionSide | None
) -> Position | None:
    if not portfolio.dual_side_position:
        if position_side not in (None, PositionSide.BOTH):
            raise PositionSideMismatch(
                "The portfolio is in one-way mode: the position side is BOTH."
            )
        position_side = PositionSide.BOTH
    elif position_side is PositionSide.BOTH:
        raise PositionSideMismatch("The portfolio is in hedge mode: name LONG or SHORT.")
    statement = select(Position).where(
        Position.portfolio_id == portfolio.id,
        Position.symbol == symbol,
        Position.quantity != ZERO,
    )
    if position_side is not None:
        statement = statement.where(Position.position_side == position_side.value)
    held = list(session.scalars(statement))
    if len(held) > 1:
        raise PositionSideMismatch(
            f"Both {symbol} positions are open: name the position side (LONG or SHORT)."
        )
    return held[0] if held else None
