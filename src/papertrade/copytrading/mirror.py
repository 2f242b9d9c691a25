"""Mirroring: every fill of a leader, after a relation started, moves the follower's position
to the leader's position after that fill × the relation's ratio (rules.target_position), with
orders through orders.service.place_all, in the outbox consumer's unit of work (docs/social.md,
"How a copy is sized"). The leader's position states, not the fills' arithmetic, are mirrored:
concurrent leader orders cannot leave a follower on the wrong side or size.

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
    """A leader order that filled, with the leader's position in its symbol just before and
    just after it (the leader's sequence of position states is what the copies mirror)."""

    event_id: int
    order_id: int
    portfolio_id: int
    symbol: str
    side: Side
    price: Decimal
    quantity: Decimal
    before: Decimal  # the leader's position (signed) before the fill
    after: Decimal  # … and after it
    leverage: int
    equity: Decimal

    @property
    def closing(self) -> Decimal:
        """The part of the fill that reduced the position held before it."""
        if self.before != ZERO and position_math.sign(self.before) != self.side.sign:
            return min(self.quantity, abs(self.before))
        return ZERO

    @property
    def opening(self) -> Decimal:
        return self.quantity - self.closing


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
    """The leader fills to mirror, in outbox order, each with the relations that copy it."""

    fills: list[tuple[LeaderFill, list[CopyRelation]]] = field(default_factory=list)
    legs: list[Leg] = field(default_factory=list)  # every leg recorded, once placed


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
            # Locked before the followers' portfolios (workset.load below), in the order an
            # unfollow, a settlement or a deletion takes them: relation, then portfolio. The
            # other way round, an unfollow and this round deadlocked (tests/copytrading/
            # test_unfollow_race.py).
            .with_for_update(key_share=True)
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
        if started:
            batch.fills.append((await leader_fill(session, event), started))
    if not batch.fills:
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
                    leader_portfolio_id=leg.relation.leader_portfolio_id,
                    follower_user_id=leg.relation.follower_user_id,
                    leader_order_id=leg.fill.order_id,
                    symbol=leg.fill.symbol,
                    reason=leg.reason,
                    detail=leg.detail,
                )
            )
    await _portfolio_stops(uow, venue, {leg.relation.id: leg.relation for leg in batch.legs})


async def leader_fill(session: AsyncSession, event: StoredEvent) -> LeaderFill:
    """The leader's fill with the leader's position right after it: the position now less every
    fill of that symbol after this order's last fill. Fills of one portfolio are written under
    its lock, so their ids follow the order its position changed in, whatever else committed
    concurrently or since."""
    assert event.portfolio_id is not None
    data = event.data
    order_id, symbol = int(data["id"]), str(data["symbol"])
    side = Side(data["side"])
    quantity = Decimal(data["filled_quantity"])
    last = select(func.max(Fill.id)).where(Fill.order_id == order_id).scalar_subquery()
    signed = case((Fill.side == Side.BUY.value, Fill.quantity), else_=-Fill.quantity)
    since = (
        select(decimal_sum(signed))
        .where(Fill.portfolio_id == event.portfolio_id, Fill.symbol == symbol, Fill.id > last)
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
    after = now_qty - (filled_since or ZERO)
    leader = await session.get(Portfolio, event.portfolio_id)
    return LeaderFill(
        event_id=event.id,
        order_id=order_id,
        portfolio_id=event.portfolio_id,
        symbol=symbol,
        side=side,
        price=Decimal(data["avg_price"]),
        quantity=quantity,
        before=after - side.sign * quantity,
        after=after,
        leverage=leverage,
        equity=leader.balance if leader is not None else ZERO,
    )


def _place(session: Session, uow: AsyncWork, venue: Venue, batch: Batch) -> None:
    """Mirror the leader's fills one after the other, each against the followers' positions as
    the copies before it left them: first every relation's close or reduction (one place_all),
    then, against the positions those left, every relation's open (another), so a copy never
    flips through the wrong side; then record each leg's outcome."""
    work = uow.on(session)
    workset.load(
        work,
        {relation.follower_portfolio_id for _, relations in batch.fills for relation in relations},
    )
    for fill, relations in batch.fills:
        targets = {relation.id: _target(work, venue, relation, fill) for relation in relations}
        closes = [
            leg for r in relations if (leg := _close_leg(work, venue, r, fill, targets[r.id]))
        ]
        _execute(work, venue, closes)
        opens: list[Leg] = []
        for relation in relations:
            leg = _open_leg(work, venue, relation, fill, targets[relation.id])
            if leg is not None:
                opens.append(leg)
        _execute(work, venue, opens)
        legs = closes + opens
        for relation in relations:
            if not any(leg.relation is relation for leg in legs):
                legs.append(_nothing_to_do(work, relation, fill, targets[relation.id]))
        for leg in legs:
            _record(work, leg, leg.order)
        batch.legs.extend(legs)
    work.before_commit(session)


def _execute(work: SyncWork, venue: Venue, legs: list[Leg]) -> None:
    """Place the legs that have an order in one place_all and note each one's outcome."""
    placed = [leg for leg in legs if leg.command is not None]
    if not placed:
        return
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


def _held(work: SyncWork, relation: CopyRelation, symbol: str) -> Decimal:
    state = workset.get(work, relation.follower_portfolio_id)
    position = state.positions.get(symbol) if state is not None else None
    return position.quantity if position is not None else ZERO


def _leverage(relation: CopyRelation, fill: LeaderFill) -> int:
    return relation.leverage or fill.leverage


def _sizing(relation: CopyRelation) -> rules.Sizing:
    return rules.Sizing(
        mode=relation.mode,
        amount=relation.amount,
        multiplier=relation.multiplier,
        allocation_equity=relation.allocation + relation.cum_net_pnl,
        max_order_margin=relation.max_order_margin,
    )


def _target(work: SyncWork, venue: Venue, relation: CopyRelation, fill: LeaderFill) -> Decimal:
    """The follower's target position after this leader fill (rules.target_position): the
    leader's position after it × the relation's ratio, on the step grid."""
    if fill.after == ZERO:
        return ZERO
    try:
        instrument = venue.instrument(fill.symbol)
        mark = venue.quote(fill.symbol).mark_price
    except (PapertradeError, TradingRuleError):
        mark, instrument = fill.price, None
    step = instrument.step_size if instrument is not None else Decimal("0.001")
    return rules.target_position(
        _sizing(relation),
        leader_before=fill.before,
        leader_after=fill.after,
        held=_held(work, relation, fill.symbol),
        leader_price=fill.price,
        leader_leverage=fill.leverage,
        leader_equity=fill.equity,
        leverage=_leverage(relation, fill),
        price=mark,
        step=step,
    )


def _moves_with_leader(fill: LeaderFill, change: Decimal) -> bool:
    """A copy moves the follower's position only the way the leader's fill moved theirs."""
    return change != ZERO and position_math.sign(change) == fill.side.sign


def _close_leg(
    work: SyncWork, venue: Venue, relation: CopyRelation, fill: LeaderFill, target: Decimal
) -> Leg | None:
    """The close (all of the position, when the target is flat or on the other side) or the
    reduction (down to the target) the follower's position needs, if any."""
    held = _held(work, relation, fill.symbol)
    if held == ZERO:
        return None
    if target == ZERO or position_math.sign(target) != position_math.sign(held):
        quantity = abs(held)
    elif abs(target) < abs(held):
        quantity = abs(held) - abs(target)
    else:
        return None
    if not _moves_with_leader(fill, -position_math.sign(held) * quantity):
        return None
    leg = Leg(relation, fill, "close", fill.side)
    leg.command = PlaceOrder(
        portfolio_id=relation.follower_portfolio_id,
        symbol=fill.symbol,
        side=None,
        type=OrderType.MARKET,
        action=Action.CLOSE,
        quantity=quantity,
        source=copies.COPY_SOURCE,
    )
    return leg


def _open_leg(
    work: SyncWork,
    venue: Venue,
    relation: CopyRelation,
    fill: LeaderFill,
    target: Decimal,
) -> Leg | None:
    """The opening order that brings the follower's position (as the closes left it) out to
    the target, on the leader's side; None when it is not further out than the position."""
    held = _held(work, relation, fill.symbol)
    if target == ZERO or (
        abs(target) <= abs(held) and position_math.sign(held) == position_math.sign(target)
    ):
        return None
    if not _moves_with_leader(fill, target - held):
        return None
    leg = Leg(relation, fill, "open", fill.side)
    if held != ZERO and position_math.sign(held) != position_math.sign(target):
        leg.reason = "rejected"
        leg.detail = "the close of the other side before this open was refused"
        return leg
    try:
        leg.command = _open_command(work, venue, leg, abs(target) - abs(held))
    except (PapertradeError, TradingRuleError) as refused:
        leg.reason, leg.detail = "market", str(refused)[:300]
    return leg


def _nothing_to_do(
    work: SyncWork, relation: CopyRelation, fill: LeaderFill, target: Decimal
) -> Leg:
    """A leader fill that changes nothing for this follower, kept with why."""
    held = _held(work, relation, fill.symbol)
    leg = Leg(relation, fill, "open" if fill.opening > ZERO else "close", fill.side)
    if fill.opening == ZERO and (
        held == ZERO or position_math.sign(held) != position_math.sign(fill.before)
    ):
        leg.reason, leg.detail = "no_position", f"no copied {fill.symbol} position to close"
    elif target == held and target == ZERO:
        leg.reason = "min_qty"
        leg.detail = "the leader's position × the copy's ratio is below one step"
    else:
        leg.reason = "in_line"
        leg.detail = (
            f"your {fill.symbol} position {held} is already at or past the target {target} "
            "the way the leader's fill went"
        )
    return leg


def _open_command(work: SyncWork, venue: Venue, leg: Leg, wanted: Decimal) -> PlaceOrder | None:
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
    leverage = _leverage(relation, fill)
    _use_leverage(work, venue, instrument, relation.follower_portfolio_id, leverage)
    quantity = rules.capped_open(_sizing(relation), wanted, leverage, mark, instrument.step_size)
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
        "leader_quantity": (fill.closing if leg.leg == "close" else fill.opening) or fill.quantity,
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
            await copies.end(uow, relation, "stop", market=venue.market)


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
