"""Copy relations: follow, list, pause/resume, unfollow, leader terms, and the revenue-share
settlement (docs/social.md). Services take a unit of work and never commit."""

from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.accounts import returns
from papertrade.auth.principal import Principal
from papertrade.copytrading import rules
from papertrade.copytrading.events import CopyEnded, CopyStarted, RevenueShareSettled
from papertrade.copytrading.schemas import RelationCreate
from papertrade.db import CURRENT
from papertrade.errors import Conflict, NotFound
from papertrade.kit.decimals import ZERO
from papertrade.ledger.events import BalanceChanged
from papertrade.ledger.service import post
from papertrade.market.feed import MarketFeed
from papertrade.models import (
    CopyLeader,
    CopyRelation,
    CopySettlement,
    CopyTrade,
    OutboxEvent,
    Portfolio,
    Position,
    User,
)
from papertrade.orders import service as orders
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.pricing import Venue
from papertrade.portfolios import service as portfolios
from papertrade.profiles.names import public_name
from papertrade.tiers import limits
from papertrade.trading.enums import Action, LedgerKind, OrderType
from papertrade.trading.errors import TradingRuleError
from papertrade.uow import AsyncWork

ACTIVE, PAUSED, ENDED = "active", "paused", "ended"
DEFAULT_SHARE_PCT = Decimal(10)
MAX_FOLLOWING = 20
COPY_SOURCE = "copy"


def not_found() -> NotFound:
    return NotFound("Copy relation not found.", code="copy_not_found")


def copier(user_id: int) -> Principal:
    """Copy trading acts for the follower, who set it up (no credential of theirs is used)."""
    return Principal(kind="session", user_id=user_id, credential_id=0)


async def share_pct(session: AsyncSession, leader_portfolio_id: int) -> Decimal:
    terms = await session.get(CopyLeader, leader_portfolio_id)
    return terms.profit_share_pct if terms is not None else DEFAULT_SHARE_PCT


async def public_portfolio(session: AsyncSession, portfolio_id: int) -> Portfolio:
    leader = await session.get(Portfolio, portfolio_id)
    if leader is None or leader.deleted_at is not None or leader.visibility != "public":
        raise NotFound("Portfolio not found.", code="portfolio_not_found")
    return leader


async def follow(
    uow: AsyncWork, principal: Principal, body: RelationCreate, *, enforce_tier: bool = True
) -> CopyRelation:
    session = uow.session
    leader = await public_portfolio(session, body.leader_portfolio_id)
    mine = await portfolios.get_owned(session, principal, body.portfolio_id, for_update=True)
    if enforce_tier:  # the follower's leaders and the leader's followers (tier_limit)
        await limits.check_copy(session, principal.user_id, leader.user_id, uow.now())
    if mine.id == leader.id:
        raise Conflict("A portfolio cannot copy itself.", code="copy_invalid")
    if leader.user_id == principal.user_id:  # self-dealing: a profit share paid to yourself
        raise Conflict(
            f"Portfolio {leader.code} is yours; copying your own portfolio is not allowed.",
            code="copy_own_portfolio",
        )
    live = select(CopyRelation).where(CopyRelation.status != ENDED)
    taken = await session.scalar(
        live.where(
            CopyRelation.follower_portfolio_id == mine.id,
            CopyRelation.leader_portfolio_id == leader.id,
        )
    )
    if taken is not None:
        raise Conflict(
            f"Portfolio {mine.code} already copies {leader.code} (relation {taken.id}).",
            code="copy_exists",
        )
    following = await session.scalar(
        select(func.count())
        .select_from(CopyRelation)
        .where(CopyRelation.follower_user_id == principal.user_id, CopyRelation.status != ENDED)
    )
    if (following or 0) >= MAX_FOLLOWING:
        raise Conflict(f"You copy {MAX_FOLLOWING} leaders already.", code="copy_limit")
    start = await session.scalar(select(func.max(OutboxEvent.id))) or 0
    relation = CopyRelation(
        leader_portfolio_id=leader.id,
        leader_user_id=leader.user_id,
        follower_portfolio_id=mine.id,
        follower_user_id=principal.user_id,
        mode=body.mode,
        allocation=body.allocation,
        amount=body.amount if body.mode == "fixed_amount" else None,
        multiplier=body.multiplier if body.mode == "multiplier" else None,
        leverage=body.leverage if isinstance(body.leverage, int) else None,
        max_order_margin=body.max_order_margin,
        stop_pct=body.stop_pct,
        slippage_pct=body.slippage_pct,
        symbols=",".join(sorted({s.upper() for s in body.symbols})),
        profit_share_pct=await share_pct(session, leader.id),
        status=ACTIVE,
        start_event_id=start,
        cum_net_pnl=ZERO,
        hwm=ZERO,
        fees_paid=ZERO,
        settled_week=0,
        created_at=uow.now(),
    )
    session.add(relation)
    await session.flush()
    follower = await session.get(User, principal.user_id)
    uow.emit(
        CopyStarted(
            relation_id=relation.id,
            leader_user_id=leader.user_id,
            leader_portfolio_id=leader.id,
            leader_portfolio_name=leader.name,
            follower_name=public_name(follower) if follower is not None else "A trader",
            mode=relation.mode,
            allocation=relation.allocation,
        )
    )
    return relation


async def mine(session: AsyncSession, user_id: int) -> Sequence[CopyRelation]:
    """The relations I follow with, and those that copy my portfolios, newest first."""
    statement = select(CopyRelation).where(
        or_(CopyRelation.follower_user_id == user_id, CopyRelation.leader_user_id == user_id)
    )
    return (await session.scalars(statement.order_by(CopyRelation.id.desc()))).all()


async def visible(
    session: AsyncSession, user_id: int, relation_id: int, *, for_update: bool = False
) -> CopyRelation:
    """A relation the caller follows with or leads; anyone else's is a 404."""
    statement = select(CopyRelation).where(CopyRelation.id == relation_id)
    if for_update:
        statement = statement.with_for_update()
    relation = await session.scalar(statement)
    if relation is None or user_id not in (relation.follower_user_id, relation.leader_user_id):
        raise not_found()
    return relation


async def followed(uow: AsyncWork, user_id: int, relation_id: int) -> CopyRelation:
    """A relation the caller follows with (locked): only the follower changes it."""
    relation = await visible(uow.session, user_id, relation_id, for_update=True)
    if relation.follower_user_id != user_id:
        raise not_found()
    return relation


async def pause(uow: AsyncWork, user_id: int, relation_id: int, *, paused: bool) -> CopyRelation:
    relation = await followed(uow, user_id, relation_id)
    if relation.status == ENDED:
        raise Conflict("This copy has ended; follow again to copy.", code="copy_ended")
    relation.status = PAUSED if paused else ACTIVE
    return relation


async def unfollow(
    uow: AsyncWork, venue: Venue, user_id: int, relation_id: int, *, close_positions: bool
) -> CopyRelation:
    """End the copy: with close_positions, close the copied symbols' positions at market first
    (their PnL counts); then settle the revenue share."""
    relation = await followed(uow, user_id, relation_id)
    if relation.status == ENDED:
        raise Conflict("This copy has already ended.", code="copy_ended")
    if close_positions:
        await close_copied(uow, venue, relation)
    await end(uow, relation, "unfollow", market=venue.market)
    return relation


async def copied_symbols(session: AsyncSession, relation_id: int) -> list[str]:
    rows = await session.scalars(
        select(CopyTrade.symbol)
        .where(CopyTrade.relation_id == relation_id, CopyTrade.status == "copied")
        .distinct()
    )
    return sorted(rows.all())


async def close_copied(uow: AsyncWork, venue: Venue, relation: CopyRelation) -> None:
    """Close, at market, the follower's positions in every symbol this relation copied; each
    close counts in the relation's net PnL."""
    symbols = await copied_symbols(uow.session, relation.id)
    if not symbols:
        return
    positions = await uow.session.scalars(
        select(Position).where(
            Position.portfolio_id == relation.follower_portfolio_id,
            Position.symbol.in_(symbols),
            Position.quantity != ZERO,
        )
    )
    for position in positions.all():
        cmd = PlaceOrder(
            portfolio_id=relation.follower_portfolio_id,
            symbol=position.symbol,
            side=None,
            type=OrderType.MARKET,
            action=Action.CLOSE,
            quantity=abs(position.quantity),
            source=COPY_SOURCE,
        )
        try:
            order = await orders.place_one(uow, venue, copier(relation.follower_user_id), cmd)
        except TradingRuleError:
            continue  # nothing left to close
        relation.cum_net_pnl += order.realized_pnl - order.commission


async def end(
    uow: AsyncWork, relation: CopyRelation, reason: str, *, market: MarketFeed | None = None
) -> CopySettlement:
    relation.status = ENDED
    relation.end_reason = reason
    relation.ended_at = uow.now()
    uow.emit(
        CopyEnded(
            portfolio_id=relation.follower_portfolio_id,
            relation_id=relation.id,
            leader_portfolio_id=relation.leader_portfolio_id,
            follower_user_id=relation.follower_user_id,
            leader_user_id=relation.leader_user_id,
            reason=reason,
        )
    )
    return await settle(uow, relation, reason, market=market)


async def receiver_of(
    session: AsyncSession, terms: CopyLeader | None, leader_portfolio_id: int, leader_user_id: int
) -> int:
    """The portfolio that receives `leader_portfolio_id`'s profit shares under `terms`: the one
    the leader chose (while it is still theirs and not deleted), else the copied one itself."""
    chosen = terms.payout_portfolio_id if terms is not None else None
    if chosen is not None:
        target = await session.get(Portfolio, chosen)
        if target is not None and target.deleted_at is None and target.user_id == leader_user_id:
            return target.id
    return leader_portfolio_id


async def payout_portfolio_id(session: AsyncSession, relation: CopyRelation) -> int:
    """The leader's portfolio that receives this relation's profit shares (receiver_of)."""
    terms = await session.get(CopyLeader, relation.leader_portfolio_id)
    return await receiver_of(session, terms, relation.leader_portfolio_id, relation.leader_user_id)


async def settle(
    uow: AsyncWork, relation: CopyRelation, reason: str, *, market: MarketFeed | None = None
) -> CopySettlement:
    """Charge the revenue share on the net PnL above the high-water mark: the fee leaves the
    follower's portfolio for a portfolio of the leader's choosing, both through the ledger. It
    is paper money and never reaches a wallet (docs/social.md, docs/wallet.md). With the market
    at hand, both portfolios' equity is marked just before (the fee is a cash flow: their
    time-weighted returns end the sub-period there, exactly)."""
    receiver_id = await payout_portfolio_id(uow.session, relation)
    # Both portfolios at once, in id order as every path that takes several does (the funding
    # job, the mirror): the follower's first, then the receiver, deadlocked with them.
    locked = await uow.session.scalars(
        select(Portfolio)
        .where(Portfolio.id.in_({relation.follower_portfolio_id, receiver_id}))
        .order_by(Portfolio.id)
        .with_for_update()
        .execution_options(**CURRENT)
    )
    portfolios = {portfolio.id: portfolio for portfolio in locked}
    follower, receiver = portfolios[relation.follower_portfolio_id], portfolios[receiver_id]
    share = rules.revenue_share(
        relation.cum_net_pnl, relation.hwm, relation.profit_share_pct, follower.balance
    )
    row = CopySettlement(
        relation_id=relation.id,
        leader_user_id=relation.leader_user_id,
        follower_user_id=relation.follower_user_id,
        reason=reason,
        net_pnl=relation.cum_net_pnl,
        hwm_before=relation.hwm,
        hwm_after=share.hwm_after,
        pct=relation.profit_share_pct,
        fee=share.fee,
        payout_portfolio_id=receiver_id,
        created_at=uow.now(),
    )
    uow.session.add(row)
    await uow.session.flush()
    relation.hwm = share.hwm_after
    if share.fee > ZERO:
        note = f"revenue share, copy {relation.id}, settlement {row.id}"
        if market is not None:
            for portfolio in (follower, receiver):
                await returns.mark_before_flow(uow, market, portfolio)
        post(uow, follower, LedgerKind.PROFIT_SHARE, -share.fee, note=note)
        post(uow, receiver, LedgerKind.PROFIT_SHARE, share.fee, note=note)
        relation.fees_paid += share.fee
        uow.emit(BalanceChanged(portfolio_id=follower.id, balance=follower.balance))
        uow.emit(BalanceChanged(portfolio_id=receiver.id, balance=receiver.balance))
    uow.emit(
        RevenueShareSettled(
            settlement_id=row.id,
            relation_id=relation.id,
            leader_portfolio_id=relation.leader_portfolio_id,
            leader_user_id=relation.leader_user_id,
            follower_user_id=relation.follower_user_id,
            reason=reason,
            net_pnl=row.net_pnl,
            hwm_before=row.hwm_before,
            hwm_after=row.hwm_after,
            pct=row.pct,
            fee=row.fee,
            payout_portfolio_id=receiver_id,
        )
    )
    return row


async def trades(
    session: AsyncSession, relation: CopyRelation, *, before_id: int | None, limit: int
) -> Sequence[CopyTrade]:
    statement = select(CopyTrade).where(CopyTrade.relation_id == relation.id)
    if before_id is not None:
        statement = statement.where(CopyTrade.id < before_id)
    return (await session.scalars(statement.order_by(CopyTrade.id.desc()).limit(limit))).all()


async def settlements(
    session: AsyncSession, user_id: int, *, before_id: int | None, limit: int
) -> Sequence[CopySettlement]:
    """Revenue-share events where I paid or earned, newest first."""
    statement = select(CopySettlement).where(
        or_(CopySettlement.follower_user_id == user_id, CopySettlement.leader_user_id == user_id)
    )
    if before_id is not None:
        statement = statement.where(CopySettlement.id < before_id)
    return (await session.scalars(statement.order_by(CopySettlement.id.desc()).limit(limit))).all()


async def set_terms(
    uow: AsyncWork,
    principal: Principal,
    portfolio_id: int,
    pct: Decimal | None,
    *,
    payout_portfolio_id: int | None = None,
) -> CopyLeader:
    """The leader's profit share (it applies to relations made from now on) and the portfolio
    that receives it (one of the leader's own, from the next settlement on); None keeps each."""
    await portfolios.get_owned(uow.session, principal, portfolio_id)
    if payout_portfolio_id is not None:  # another user's (or a deleted) portfolio: 404
        await portfolios.get_owned(uow.session, principal, payout_portfolio_id)
    terms = await uow.session.get(CopyLeader, portfolio_id, with_for_update=True)
    if terms is None:
        terms = CopyLeader(portfolio_id=portfolio_id, profit_share_pct=DEFAULT_SHARE_PCT)
        uow.session.add(terms)
    if pct is not None:
        terms.profit_share_pct = pct
    if payout_portfolio_id is not None:
        terms.payout_portfolio_id = (
            None if payout_portfolio_id == portfolio_id else payout_portfolio_id
        )
    terms.updated_at = uow.now()
    return terms


async def own_terms(
    session: AsyncSession, principal: Principal, portfolio_id: int
) -> tuple[Decimal, int]:
    """My portfolio's profit share and the portfolio that would receive its next shares (what
    the next settlement uses); anyone else's (or a deleted) portfolio is a 404."""
    portfolio = await portfolios.get_owned(session, principal, portfolio_id)
    terms = await session.get(CopyLeader, portfolio_id)
    pct = terms.profit_share_pct if terms is not None else DEFAULT_SHARE_PCT
    return pct, await receiver_of(session, terms, portfolio_id, portfolio.user_id)


async def followers(session: AsyncSession, portfolio_id: int) -> int:
    count = await session.scalar(
        select(func.count())
        .select_from(CopyRelation)
        .where(CopyRelation.leader_portfolio_id == portfolio_id, CopyRelation.status != ENDED)
    )
    return int(count or 0)
