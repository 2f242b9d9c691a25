"""The weekly revenue-share settlement (B3): each Monday 00:00 UTC, every relation with no open
position in the symbols it copied settles; one with open positions rolls on to the next run. The
portfolio stops are checked on the same pass (a loss between two leader fills can trip them)."""

from decimal import Decimal

from sqlalchemy import select

from papertrade.context import AppContext
from papertrade.copytrading import service as copies
from papertrade.copytrading.mirror import stop_breached
from papertrade.kit.decimals import ZERO
from papertrade.models import CopyRelation, Position
from papertrade.orders.pricing import Venue
from papertrade.uow import AsyncWork

DAY_MS = 86_400_000
WEEK_MS = 7 * DAY_MS
# 1970-01-01 was a Thursday: Mondays fall 4 days after each multiple of a week.
MONDAY_OFFSET_MS = 4 * DAY_MS


def week_start(now: int) -> int:
    """The latest Monday 00:00 UTC at or before `now` (ms)."""
    return (now - MONDAY_OFFSET_MS) // WEEK_MS * WEEK_MS + MONDAY_OFFSET_MS


async def has_open_positions(uow: AsyncWork, relation: CopyRelation) -> bool:
    symbols = await copies.copied_symbols(uow.session, relation.id)
    if not symbols:
        return False
    held = await uow.session.scalar(
        select(Position.id).where(
            Position.portfolio_id == relation.follower_portfolio_id,
            Position.symbol.in_(symbols),
            Position.quantity != Decimal(ZERO),
        )
    )
    return held is not None


async def settle_one(ctx: AppContext, venue: Venue, relation_id: int) -> str:
    """Settle one relation if it is due: 'settled', 'rolled', 'stopped' or 'skipped'."""
    async with ctx.transaction() as uow:
        relation = await uow.session.get(CopyRelation, relation_id, with_for_update=True)
        if relation is None or relation.status == copies.ENDED:
            return "skipped"
        if await stop_breached(uow, venue, relation):
            await copies.close_copied(uow, venue, relation)
            await copies.end(uow, relation, "stop", market=venue.market)
            return "stopped"
        week = week_start(uow.now())
        if relation.settled_week >= week:
            return "skipped"
        if await has_open_positions(uow, relation):
            return "rolled"
        relation.settled_week = week
        if relation.cum_net_pnl > relation.hwm:
            await copies.settle(uow, relation, "weekly", market=venue.market)
            return "settled"
        return "skipped"


async def run_due(ctx: AppContext, venue: Venue) -> dict[str, int]:
    """One pass over every live relation, each in its own unit of work."""
    async with ctx.db.reader() as session:
        ids = (
            await session.scalars(
                select(CopyRelation.id).where(CopyRelation.status != copies.ENDED)
            )
        ).all()
    counts = {"settled": 0, "rolled": 0, "stopped": 0, "skipped": 0}
    for relation_id in ids:
        counts[await settle_one(ctx, venue, relation_id)] += 1
    return counts
