"""/v1/copy/*: follow a public portfolio, manage my copies, read copied trades and the
revenue-share events; leaders set their profit share."""

from collections.abc import Iterable, Mapping
from typing import Annotated

from fastapi import APIRouter, Query
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.copytrading import leaders, service
from papertrade.copytrading.schemas import (
    CopyTradeRead,
    LeaderStatsRead,
    LeaderTerms,
    LeaderTermsRead,
    RelationCreate,
    RelationRead,
    SettlementRead,
    Unfollow,
)
from papertrade.kit.ids import Id
from papertrade.kit.time import now_ms
from papertrade.models import CopyRelation, Portfolio
from papertrade.models.portfolio import code_of
from papertrade.orders.pricing import Venue

router = APIRouter(tags=["copy trading"])
Limit = Annotated[int, Query(ge=1, le=200)]


async def portfolio_names(
    session: AsyncSession, relations: Iterable[CopyRelation]
) -> dict[int, str]:
    """The names of the portfolios on either side of `relations` (deleted ones left out)."""
    ids = {r.leader_portfolio_id for r in relations} | {r.follower_portfolio_id for r in relations}
    if not ids:
        return {}
    rows = await session.execute(
        select(Portfolio.id, Portfolio.name).where(
            Portfolio.id.in_(ids), Portfolio.deleted_at.is_(None)
        )
    )
    return {row.id: row.name for row in rows}


def render(
    relation: CopyRelation, user_id: int, names: Mapping[int, str] | None = None
) -> RelationRead:
    names = names or {}
    follower = relation.follower_user_id == user_id
    return RelationRead(
        id=relation.id,
        role="follower" if follower else "leader",
        leader_portfolio_id=relation.leader_portfolio_id,
        leader_portfolio_code=code_of(relation.leader_portfolio_id),
        leader_portfolio_name=names.get(relation.leader_portfolio_id),
        portfolio_id=relation.follower_portfolio_id,
        portfolio_code=code_of(relation.follower_portfolio_id),
        portfolio_name=names.get(relation.follower_portfolio_id) if follower else None,
        mode=relation.mode,
        allocation=relation.allocation,
        amount=relation.amount,
        multiplier=relation.multiplier,
        leverage=relation.leverage if relation.leverage is not None else "follow",
        max_order_margin=relation.max_order_margin,
        stop_pct=relation.stop_pct,
        slippage_pct=relation.slippage_pct,
        symbols=[s for s in relation.symbols.split(",") if s],
        profit_share_pct=relation.profit_share_pct,
        status=relation.status,
        cum_net_pnl=relation.cum_net_pnl,
        hwm=relation.hwm,
        fees_paid=relation.fees_paid,
        end_reason=relation.end_reason,
        created_at=relation.created_at,
        ended_at=relation.ended_at,
    )


@router.post("/copy/relations", status_code=201, response_model=RelationRead)
async def follow(body: RelationCreate, principal: Writer, ctx: Ctx) -> RelationRead:
    """Copy a public portfolio into one of mine; only its fills from now on are copied."""
    async with ctx.transaction() as uow:
        relation = await service.follow(
            uow, principal, body, enforce_tier=ctx.settings.tiers_enforced
        )
        names = await portfolio_names(uow.session, [relation])
        return render(relation, principal.user_id, names)


@router.get("/copy/relations", response_model=list[RelationRead])
async def mine(principal: Caller, ctx: Ctx) -> list[RelationRead]:
    """My copies, and the copies of my portfolios (as their leader), newest first."""
    async with ctx.db.reader() as session:
        relations = await service.mine(session, principal.user_id)
        names = await portfolio_names(session, relations)
        return [render(r, principal.user_id, names) for r in relations]


@router.get("/copy/relations/{relation_id}", response_model=RelationRead)
async def one(relation_id: Id, principal: Caller, ctx: Ctx) -> RelationRead:
    async with ctx.db.reader() as session:
        relation = await service.visible(session, principal.user_id, relation_id)
        names = await portfolio_names(session, [relation])
        return render(relation, principal.user_id, names)


@router.post("/copy/relations/{relation_id}/pause", response_model=RelationRead)
async def pause(relation_id: Id, principal: Writer, ctx: Ctx) -> RelationRead:
    """Stop copying opens; closes of copied positions still mirror."""
    async with ctx.transaction() as uow:
        relation = await service.pause(uow, principal.user_id, relation_id, paused=True)
        return render(relation, principal.user_id, await portfolio_names(uow.session, [relation]))


@router.post("/copy/relations/{relation_id}/resume", response_model=RelationRead)
async def resume(relation_id: Id, principal: Writer, ctx: Ctx) -> RelationRead:
    async with ctx.transaction() as uow:
        relation = await service.pause(uow, principal.user_id, relation_id, paused=False)
        return render(relation, principal.user_id, await portfolio_names(uow.session, [relation]))


@router.post("/copy/relations/{relation_id}/unfollow", response_model=RelationRead)
async def unfollow(relation_id: Id, body: Unfollow, principal: Writer, ctx: Ctx) -> RelationRead:
    """End the copy (closing the copied positions at market unless close_positions is false)
    and settle the revenue share."""
    async with ctx.transaction() as uow:
        relation = await service.unfollow(
            uow, Venue.of(ctx), principal.user_id, relation_id, close_positions=body.close_positions
        )
        return render(relation, principal.user_id, await portfolio_names(uow.session, [relation]))


@router.get("/copy/relations/{relation_id}/trades", response_model=list[CopyTradeRead])
async def trades(
    relation_id: Id, principal: Caller, ctx: Ctx, before_id: Id | None = None, limit: Limit = 50
) -> list[CopyTradeRead]:
    """Each leader fill of the relation: copied (with my order) or skipped (with the reason)."""
    async with ctx.db.reader() as session:
        relation = await service.visible(session, principal.user_id, relation_id)
        rows = await service.trades(session, relation, before_id=before_id, limit=limit)
        return [CopyTradeRead.model_validate(row) for row in rows]


@router.get("/copy/settlements", response_model=list[SettlementRead])
async def settlements(
    principal: Caller, ctx: Ctx, before_id: Id | None = None, limit: Limit = 50
) -> list[SettlementRead]:
    """Revenue-share events I paid (as follower) or earned (as leader), newest first."""
    async with ctx.db.reader() as session:
        rows = await service.settlements(
            session, principal.user_id, before_id=before_id, limit=limit
        )
        return [
            SettlementRead.model_validate(row).model_copy(
                update={"payout_portfolio_id": None}
                if row.leader_user_id != principal.user_id
                else {}
            )
            for row in rows
        ]


@router.get("/copy/leaders/{portfolio_id}", response_model=LeaderStatsRead)
async def leader(portfolio_id: Id, ctx: Ctx) -> LeaderStatsRead:
    """A public portfolio's copy terms and leader statistics (no sign-in needed)."""
    async with ctx.db.reader() as session:
        portfolio = await service.public_portfolio(session, portfolio_id)
        figures = await leaders.compute(session, ctx.market, portfolio, now_ms())
        return LeaderStatsRead(
            portfolio_id=portfolio_id,
            profit_share_pct=await service.share_pct(session, portfolio_id),
            followers=figures.followers,
            followers_pnl=figures.followers_pnl,
            aum=figures.aum,
            roi_7d_pct=figures.roi_pct[7],
            roi_30d_pct=figures.roi_pct[30],
            roi_90d_pct=figures.roi_pct[90],
            max_drawdown_pct=figures.max_drawdown_pct,
            win_rate=figures.win_rate,
        )


@router.put("/copy/leaders/{portfolio_id}", response_model=LeaderTermsRead)
async def set_terms(
    portfolio_id: Id, body: LeaderTerms, principal: Writer, ctx: Ctx
) -> LeaderTermsRead:
    """Set my portfolio's profit share (0-30 %; relations made from now on use it) and which of
    my portfolios receives the shares (paper money: never the wallet; at first this one)."""
    async with ctx.transaction() as uow:
        terms = await service.set_terms(
            uow,
            principal,
            portfolio_id,
            body.profit_share_pct,
            payout_portfolio_id=body.payout_portfolio_id,
        )
        count = await service.followers(uow.session, portfolio_id)
        return LeaderTermsRead(
            portfolio_id=portfolio_id,
            profit_share_pct=terms.profit_share_pct,
            followers=count,
            payout_portfolio_id=await service.receiver_of(
                uow.session, terms, portfolio_id, principal.user_id
            ),
        )


@router.get("/copy/leaders/{portfolio_id}/terms", response_model=LeaderTermsRead)
async def own_terms(portfolio_id: Id, principal: Caller, ctx: Ctx) -> LeaderTermsRead:
    """My portfolio's copy terms, as `PUT /v1/copy/leaders/{portfolio_id}` answers them: its
    profit share, its live copies (`followers`) and `payout_portfolio_id`, the one of my
    portfolios that receives the shares from the next settlement on (the copied portfolio itself
    until I choose another, and again if the chosen one is deleted). Any of my portfolios,
    public or private; another user's (or a deleted) portfolio: `404 portfolio_not_found`;
    signed out: `401 unauthenticated`."""
    async with ctx.db.reader() as session:
        pct, receiver = await service.own_terms(session, principal, portfolio_id)
        return LeaderTermsRead(
            portfolio_id=portfolio_id,
            profit_share_pct=pct,
            followers=await service.followers(session, portfolio_id),
            payout_portfolio_id=receiver,
        )
