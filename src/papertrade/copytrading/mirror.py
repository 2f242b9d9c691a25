"""Mirroring: every fill of a leader, after a relation started, becomes the follower's order
through orders.service.place_all, in the outbox consumer's unit of work (docs/social.md).

The consumer's effects (the follower's orders and fills, the copy_trades rows) and its outbox
cursor commit together, and copy_trades is unique per (relation, leader order, leg): after a
kill -9 every copy exists exactly once.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import Table, bindparam, case, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from papertrade.copytrading import rules
from papertrade.copytrading import service as copies
from papertrade.copytrading.events import CopyFilled, CopySkipped
from papertrade.errors import PapertradeError
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO
from papertrade.models import CopyRelation, CopyTrade, Fill, Portfolio, Position
from papertrade.orders import service as orders
from papertrade.orders import workset
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.pricing import Venue
from papertrade.orders.record import OrderRecord
from papertrade.outbox.store import StoredEvent
from papertrade.positions import service as position_service
from papertrade.trading import position as position_math
from papertrade.trading.enums import Action, OrderType, Side
from papertrade.trading.errors import (
    InsufficientMargin,
    InvalidQuantity,
    NotionalTooSmall,
    QtyTooSmall,
    TradingRuleError,
)
from papertrade.trading.values import Instrument
from papertrade.uow import AsyncWork, SyncWork

FILLED = "order.filled"
MIN_SIZE_ERRORS = (QtyTooSmall, NotionalTooSmall, InvalidQuantity)


@dataclass(frozen=True, slots=True)
class LeaderFill:
    """A leader order that filled, split into the part that reduced the position it had and
    the part that opened (a flip has both)."""

    event_id: int
    order_id: int
    portfolio_id: int
    symbol: str
    side: Side
    price: Decimal
    closing: Decimal
    close_fraction: Decimal  # of the leader's position before the fill
    opening: Decimal
    leverage: int
    equity: Decimal


@dataclass(slots=True)
class Leg:
    relation: CopyRelation
    fill: LeaderFill
    leg: str  # open | close
    side: Side
    command: PlaceOrder | None = None
    reason: str | None = None
    detail: str = ""
    raised_to_minimum: bool = False
    order: OrderRecord | None = None  # the follower's order, once placed


@dataclass(slots=True)
class Batch:
    legs: list[Leg] = field(default_factory=list)


async def mirror(uow: AsyncWork, venue: Venue, events: Sequence[StoredEvent]) -> None:
    filled = [e for e in events if e.type == FILLED and e.portfolio_id is not None]
    if not filled:
        return
    session = uow.session
    relations = (
        await session.scalars(
            select(CopyRelation)
            .where(
                CopyRelation.leader_portfolio_id.in_({e.portfolio_id for e in filled}),
                CopyRelation.status != copies.ENDED,
            )
            .order_by(CopyRelation.id)
        )
    ).all()
    if not relations:
        return
    by_leader: dict[int, list[CopyRelation]] = defaultdict(list)
    for relation in relations:
        by_leader[relation.leader_portfolio_id].append(relation)
    # A copy is not copied on: a chain of copies could go round in a loop.
    copies_of_copies = set(
        (
            await session.scalars(
                select(CopyTrade.follower_order_id).where(
                    CopyTrade.follower_order_id.in_([int(e.data["id"]) for e in filled])
                )
            )
        ).all()
    )
    batch = Batch()
    for event in filled:
        assert event.portfolio_id is not None
        if int(event.data["id"]) in copies_of_copies:
            continue
        started = [r for r in by_leader[event.portfolio_id] if event.id > r.start_event_id]
        if not started:
            continue
        fill = await leader_fill(session, event)
        for relation in started:
            if fill.closing > ZERO:
                batch.legs.append(Leg(relation, fill, "close", fill.side))
            if fill.opening > ZERO:
                batch.legs.append(Leg(relation, fill, "open", fill.side))
    if not batch.legs:
        return
    await session.run_sync(_place, uow, venue, batch)
    for leg in batch.legs:
        if leg.order is not None and leg.reason is None:
            order = leg.order
            uow.emit(
                CopyFilled(
                    portfolio_id=leg.relation.follower_portfolio_id,
                    relation_id=leg.relation.id,
                    follower_user_id=leg.relation.follower_user_id,
                    leader_order_id=leg.fill.order_id,
                    follower_order_id=order.id,
                    leg=leg.leg,
                    symbol=leg.fill.symbol,
                    side=order.side,
                    quantity=order.filled_quantity,
                    price=order.avg_price if order.filled_quantity > ZERO else None,
                    leader_price=leg.fill.price,
                    realized_pnl=order.realized_pnl,
                    commission=order.commission,
                )
            )
        elif leg.reason is not None:
            uow.emit(
                CopySkipped(
                    portfolio_id=leg.relation.follower_portfolio_id,
                    relation_id=leg.relation.id,
                    follower_user_id=leg.relation.follower_user_id,
                    leader_order_id=leg.fill.order_id,
                    symbol=leg.fill.symbol,
                    reason=leg.reason,
                    detail=leg.detail,
                )
            )
    await _portfolio_stops(uow, venue, {leg.relation.id: leg.relation for leg in batch.legs})


async def leader_fill(session: AsyncSession, event: StoredEvent) -> LeaderFill:
    """The leader's fill, with how much of it reduced the position held before it: the position
    now less every fill of that symbol since this order's first fill."""
    assert event.portfolio_id is not None
    data = event.data
    order_id, symbol = int(data["id"]), str(data["symbol"])
    side = Side(data["side"])
    quantity = Decimal(data["filled_quantity"])
    first = select(func.min(Fill.id)).where(Fill.order_id == order_id).scalar_subquery()
    signed = case((Fill.side == Side.BUY.value, Fill.quantity), else_=-Fill.quantity)
    since = (
        select(decimal_sum(signed))
        .where(Fill.portfolio_id == event.portfolio_id, Fill.symbol == symbol, Fill.id >= first)
        .scalar_subquery()
    )
    # One statement, so one snapshot: a later fill committing in between cannot count in one
    # of the two numbers and not in the other (PostgreSQL reads each statement afresh).
    row = (
        await session.execute(
            select(Position.quantity, Position.leverage, since).where(
                Position.portfolio_id == event.portfolio_id, Position.symbol == symbol
            )
        )
    ).first()
    now_qty, leverage, filled_since = row if row is not None else (ZERO, 20, ZERO)
    before = now_qty - (filled_since or ZERO)
    delta = side.sign * quantity
    closing = ZERO
    if before != ZERO and position_math.sign(before) != position_math.sign(delta):
        closing = min(quantity, abs(before))
    leader = await session.get(Portfolio, event.portfolio_id)
    return LeaderFill(
        event_id=event.id,
        order_id=order_id,
        portfolio_id=event.portfolio_id,
        symbol=symbol,
        side=side,
        price=Decimal(data["avg_price"]),
        closing=closing,
        close_fraction=closing / abs(before) if closing > ZERO else ZERO,
        opening=quantity - closing,
        leverage=leverage,
        equity=leader.balance if leader is not None else ZERO,
    )


def _place(session: Session, uow: AsyncWork, venue: Venue, batch: Batch) -> None:
    """Plan every leg against the followers' loaded portfolios, place them all in one
    place_all, and record each leg's outcome."""
    work = uow.on(session)
    workset.load(work, {leg.relation.follower_portfolio_id for leg in batch.legs})
    placed: list[Leg] = []
    for leg in batch.legs:
        try:
            if leg.leg == "close":
                leg.command = _close_command(work, venue, leg)
            else:
                leg.command = _open_command(work, venue, leg)
        except (PapertradeError, TradingRuleError) as refused:
            leg.reason, leg.detail = "market", str(refused)[:300]
        if leg.command is not None:
            placed.append(leg)
    outcomes = orders.place_all(
        work,
        venue,
        [
            (copies.copier(leg.relation.follower_user_id), leg.command)
            for leg in placed
            if leg.command
        ],
    )
    for leg, outcome in zip(placed, outcomes, strict=True):
        if isinstance(outcome, OrderRecord):
            leg.order = outcome
        else:
            leg.reason = _reason(leg, outcome)
            leg.detail = str(outcome)[:300]
    for leg in batch.legs:  # in the leader's order
        _record(work, leg, leg.order)
    work.before_commit(session)


def _close_command(work: SyncWork, venue: Venue, leg: Leg) -> PlaceOrder | None:
    relation, fill = leg.relation, leg.fill
    state = workset.get(work, relation.follower_portfolio_id)
    held = state.positions.get(fill.symbol) if state is not None else None
    # The follower's position must be on the leader's side before the fill (the one it closes).
    if held is None or held.quantity == ZERO or position_math.sign(held.quantity) == fill.side.sign:
        leg.reason, leg.detail = "no_position", f"no copied {fill.symbol} position to close"
        return None
    instrument = venue.instrument(fill.symbol)
    quantity = rules.close_quantity(held.quantity, fill.close_fraction, instrument.step_size)
    if quantity <= ZERO:
        leg.reason, leg.detail = "min_qty", "the proportional close is below one step"
        return None
    return PlaceOrder(
        portfolio_id=relation.follower_portfolio_id,
        symbol=fill.symbol,
        side=None,
        type=OrderType.MARKET,
        action=Action.CLOSE,
        quantity=quantity,
        source=copies.COPY_SOURCE,
    )


def _open_command(work: SyncWork, venue: Venue, leg: Leg) -> PlaceOrder | None:
    relation, fill = leg.relation, leg.fill
    if relation.status == copies.PAUSED:
        leg.reason, leg.detail = "paused", "the copy is paused: no new opens"
        return None
    allowed = [s for s in relation.symbols.split(",") if s]
    if allowed and fill.symbol not in allowed:
        leg.reason, leg.detail = "symbol", f"{fill.symbol} is not in the copy's symbols"
        return None
    instrument = venue.instrument(fill.symbol)
    mark = venue.quote(fill.symbol).mark_price
    cap = rules.slippage_cap_pct(fill.symbol, relation.slippage_pct)
    if rules.slipped_too_far(fill.side, fill.price, mark, cap):
        leg.reason = "slippage"
        leg.detail = f"price {mark} is more than {cap} % from the leader's {fill.price}"
        return None
    leverage = relation.leverage or fill.leverage
    _use_leverage(work, venue, instrument, relation.follower_portfolio_id, leverage)
    sizing = rules.Sizing(
        mode=relation.mode,
        amount=relation.amount,
        multiplier=relation.multiplier,
        allocation_equity=relation.allocation + relation.cum_net_pnl,
        max_order_margin=relation.max_order_margin,
    )
    quantity = rules.open_quantity(
        sizing,
        leader_quantity=fill.opening,
        leader_price=fill.price,
        leader_leverage=fill.leverage,
        leader_equity=fill.equity,
        leverage=leverage,
        price=mark,
        step=instrument.step_size,
    )
    smallest = rules.smallest_order(instrument, mark)
    if quantity < smallest:  # B3: raised to the minimum, if the margin allows
        quantity, leg.raised_to_minimum = smallest, True
    return PlaceOrder(
        portfolio_id=relation.follower_portfolio_id,
        symbol=fill.symbol,
        side=fill.side,
        type=OrderType.MARKET,
        quantity=quantity,
        source=copies.COPY_SOURCE,
    )


def _use_leverage(
    work: SyncWork, venue: Venue, instrument: Instrument, portfolio_id: int, leverage: int
) -> None:
    """Open at `leverage` when the follower holds nothing in the symbol (a held position keeps
    its own)."""
    state = workset.get(work, portfolio_id)
    if state is None:
        return
    position = state.positions.get(instrument.symbol)
    if position is None:
        position = position_service.flat_position(portfolio_id, instrument, leverage)
        work.session.add(position)
        state.positions[instrument.symbol] = position
    elif position.quantity == ZERO:
        position.leverage = leverage


def _reason(leg: Leg, refused: PapertradeError | TradingRuleError) -> str:
    if isinstance(refused, MIN_SIZE_ERRORS):
        return "min_qty"
    if isinstance(refused, InsufficientMargin):
        # An order raised to the minimum size that margin cannot carry is a min-qty skip (B3).
        return "min_qty" if leg.raised_to_minimum else "margin"
    return "rejected"


class CopyRows:
    """The unit of work's copy_trades rows and relations' new net PnL, written with one
    executemany each before it commits (a leader fill fans out to every follower)."""

    __slots__ = ("net_pnl", "trades")

    def __init__(self) -> None:
        self.trades: list[dict[str, Any]] = []
        self.net_pnl: dict[int, Decimal] = {}

    def before_commit(self, session: Session) -> None:
        connection = session.connection()
        if self.trades:
            connection.execute(insert(_TRADES), self.trades)
            self.trades = []
        if self.net_pnl:
            connection.execute(
                update(_RELATIONS)
                .where(_RELATIONS.c.id == bindparam("relation_id"))
                .values(cum_net_pnl=bindparam("net_pnl")),
                [{"relation_id": rid, "net_pnl": pnl} for rid, pnl in self.net_pnl.items()],
            )
            self.net_pnl = {}


_TRADES = cast(Table, CopyTrade.__table__)
_RELATIONS = cast(Table, CopyRelation.__table__)


def _record(work: SyncWork, leg: Leg, order: OrderRecord | None) -> None:
    fill, relation = leg.fill, leg.relation
    rows = work.part(CopyRows)
    row: dict[str, Any] = {
        "relation_id": relation.id,
        "leader_order_id": fill.order_id,
        "leg": leg.leg,
        "symbol": fill.symbol,
        "side": fill.side.value,
        "leader_price": fill.price,
        "leader_quantity": fill.closing if leg.leg == "close" else fill.opening,
        "status": "copied" if order is not None else "skipped",
        "reason": leg.reason,
        "detail": leg.detail,
        "follower_order_id": None,
        "quantity": ZERO,
        "price": None,
        "realized_pnl": ZERO,
        "commission": ZERO,
        "created_at": work.now(),
    }
    if order is not None:
        row["follower_order_id"] = order.id
        row["quantity"] = order.filled_quantity
        row["price"] = order.avg_price if order.filled_quantity > ZERO else None
        row["realized_pnl"] = order.realized_pnl
        row["commission"] = order.commission
        net_pnl = relation.cum_net_pnl + order.realized_pnl - order.commission
        # Written in bulk by CopyRows; the loaded relation shows it without an ORM UPDATE each.
        set_committed_value(relation, "cum_net_pnl", net_pnl)
        rows.net_pnl[relation.id] = net_pnl
    rows.trades.append(row)


async def _portfolio_stops(
    uow: AsyncWork, venue: Venue, relations: dict[int, CopyRelation]
) -> None:
    for relation in relations.values():
        if relation.status != copies.ENDED and await stop_breached(uow, venue, relation):
            await copies.close_copied(uow, venue, relation)
            await copies.end(uow, relation, "stop")


async def stop_breached(uow: AsyncWork, venue: Venue, relation: CopyRelation) -> bool:
    """Whether the copy's equity (allocation + net PnL of copied trades + the unrealised PnL of
    the copied symbols' positions) fell below allocation × (1 − stop %)."""
    if relation.stop_pct is None:
        return False
    symbols = await copies.copied_symbols(uow.session, relation.id)
    unrealised = ZERO
    if symbols:
        held = await uow.session.scalars(
            select(Position).where(
                Position.portfolio_id == relation.follower_portfolio_id,
                Position.symbol.in_(symbols),
                Position.quantity != ZERO,
            )
        )
        for position in held.all():
            mark = position_service.mark_of(venue.market, position.symbol, position.entry_price)
            unrealised += position_math.unrealized_pnl(
                position.quantity, position.entry_price, mark
            )
    equity = relation.allocation + relation.cum_net_pnl + unrealised
    return equity < relation.allocation * (1 - relation.stop_pct / rules.HUNDRED)
