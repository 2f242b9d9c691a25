"""Track-record statistics of portfolios, computed from the ledger, fills and equity marks.

Return and drawdown are time-weighted (trading/returns.py, docs/trading.md "Returns"): top-ups,
transfers, resets and profit shares are cash flows, never gains or losses."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.accounts import returns
from papertrade.kit.decimals import ZERO
from papertrade.kit.time import now_ms
from papertrade.market.feed import MarketFeed
from papertrade.models import Fill, Portfolio, Position
from papertrade.positions import service as position_service
from papertrade.trading import margin
from papertrade.trading.returns import Record


@dataclass(frozen=True, slots=True)
class PortfolioStats:
    portfolio: Portfolio
    equity: Decimal
    return_pct: Decimal  # time-weighted, over the current period (since the latest reset)
    max_drawdown_pct: Decimal  # of the time-weighted index over the current period
    period_start: int  # when the current period began (the latest reset, else the creation)
    trades: int
    win_rate: Decimal | None  # closing fills with a profit after their fee; None before any
    record: Record


async def compute(
    session: AsyncSession, feed: MarketFeed | None, portfolios: Sequence[Portfolio]
) -> list[PortfolioStats]:
    """Statistics of many portfolios with a handful of grouped queries."""
    ids = [p.id for p in portfolios]
    if not ids:
        return []
    fills = {
        row[0]: (row[1], row[2], row[3])
        for row in await session.execute(
            select(
                Fill.portfolio_id,
                func.count(Fill.id),
                func.sum(case((Fill.realized_pnl != 0, 1), else_=0)),
                # a win nets a profit after the closing fill's own fee
                func.sum(case((Fill.realized_pnl - Fill.commission > 0, 1), else_=0)),
            )
            .where(Fill.portfolio_id.in_(ids))
            .group_by(Fill.portfolio_id)
        )
    }
    positions: dict[int, list[Position]] = defaultdict(list)
    for position in await session.scalars(
        select(Position).where(Position.portfolio_id.in_(ids), Position.quantity != ZERO)
    ):
        positions[position.portfolio_id].append(position)
    now = now_ms()
    equities: dict[int, Decimal] = {}
    for portfolio in portfolios:
        inputs = position_service.position_inputs(feed, positions[portfolio.id])
        equities[portfolio.id] = margin.account_state(portfolio.balance, inputs).equity
    found = await returns.records(
        session,
        portfolios,
        {p.id: returns.now_mark(now, equities[p.id], p.balance) for p in portfolios},
    )
    result = []
    for portfolio in portfolios:
        count, closes, wins = fills.get(portfolio.id, (0, 0, 0))
        record = found[portfolio.id]
        result.append(
            PortfolioStats(
                portfolio=portfolio,
                equity=equities[portfolio.id],
                return_pct=record.return_pct,
                max_drawdown_pct=record.max_drawdown_pct,
                period_start=record.period_start,
                trades=int(count or 0),
                win_rate=Decimal(int(wins or 0)) / Decimal(int(closes)) if closes else None,
                record=record,
            )
        )
    return result
