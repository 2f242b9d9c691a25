"""Leader statistics for a public portfolio's page: followers, their PnL from the copies, the
allocation behind them (AUM), ROI over 7/30/90 days, drawdown and win rate (docs/social.md).

ROI and drawdown are time-weighted, as on the Square (trading/returns.py): a top-up, a transfer
or a profit share is a cash flow, not a gain or a loss."""

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.copytrading import service as copies
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO
from papertrade.market.feed import MarketFeed
from papertrade.models import CopyRelation, Portfolio
from papertrade.square import stats
from papertrade.trading import returns

DAY_MS = 86_400_000
WINDOWS = (7, 30, 90)


@dataclass(frozen=True, slots=True)
class LeaderStats:
    followers: int
    followers_pnl: Decimal
    aum: Decimal
    roi_pct: dict[int, Decimal | None]  # days → ROI %, None while the period is younger
    max_drawdown_pct: Decimal
    period_start: int  # the current track-record period began then (the latest reset)
    win_rate: Decimal | None


async def compute(
    session: AsyncSession, feed: MarketFeed | None, leader: Portfolio, now: int
) -> LeaderStats:
    live = CopyRelation.status != copies.ENDED
    mine = CopyRelation.leader_portfolio_id == leader.id
    aum = await session.scalar(select(decimal_sum(CopyRelation.allocation)).where(mine, live))
    pnl = await session.scalar(select(decimal_sum(CopyRelation.cum_net_pnl)).where(mine))
    (track,) = await stats.compute(session, feed, [leader])
    roi: dict[int, Decimal | None] = {
        days: returns.window_return_pct(track.record, now - days * DAY_MS) for days in WINDOWS
    }
    return LeaderStats(
        followers=await copies.followers(session, leader.id),
        followers_pnl=pnl or ZERO,
        aum=aum or ZERO,
        roi_pct=roi,
        max_drawdown_pct=track.max_drawdown_pct,
        period_start=track.period_start,
        win_rate=track.win_rate,
    )
