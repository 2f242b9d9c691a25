"""Leader statistics for a public portfolio's page: followers, their PnL from the copies, the
allocation behind them (AUM), ROI over 7/30/90 days, drawdown and win rate (docs/social.md)."""

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.copytrading import service as copies
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO
from papertrade.market.feed import MarketFeed
from papertrade.models import CopyRelation, EquitySnapshot, Portfolio
from papertrade.square import stats

DAY_MS = 86_400_000
WINDOWS = (7, 30, 90)


@dataclass(frozen=True, slots=True)
class LeaderStats:
    followers: int
    followers_pnl: Decimal
    aum: Decimal
    roi_pct: dict[int, Decimal | None]  # days → ROI %, None before a snapshot that old
    max_drawdown_pct: Decimal
    win_rate: Decimal | None


async def compute(
    session: AsyncSession, feed: MarketFeed | None, leader: Portfolio, now: int
) -> LeaderStats:
    live = CopyRelation.status != copies.ENDED
    mine = CopyRelation.leader_portfolio_id == leader.id
    aum = await session.scalar(select(decimal_sum(CopyRelation.allocation)).where(mine, live))
    pnl = await session.scalar(select(decimal_sum(CopyRelation.cum_net_pnl)).where(mine))
    (track,) = await stats.compute(session, feed, [leader])
    roi: dict[int, Decimal | None] = {}
    for days in WINDOWS:
        start = await session.scalar(
            select(EquitySnapshot.equity)
            .where(
                EquitySnapshot.portfolio_id == leader.id,
                EquitySnapshot.time >= now - days * DAY_MS,
            )
            .order_by(EquitySnapshot.time)
            .limit(1)
        )
        oldest = await session.scalar(
            select(func.min(EquitySnapshot.time)).where(EquitySnapshot.portfolio_id == leader.id)
        )
        whole = oldest is not None and oldest <= now - days * DAY_MS
        roi[days] = (
            (track.equity - start) / start * 100
            if start is not None and start > ZERO and whole
            else None
        )
    return LeaderStats(
        followers=await copies.followers(session, leader.id),
        followers_pnl=pnl or ZERO,
        aum=aum or ZERO,
        roi_pct=roi,
        max_drawdown_pct=track.max_drawdown_pct,
        win_rate=track.win_rate,
    )
