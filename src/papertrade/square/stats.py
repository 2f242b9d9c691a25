"""Track-record statistics of portfolios, computed from the ledger, fills and equity marks."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import case, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO
from papertrade.market.feed import MarketFeed
from papertrade.models import EquitySnapshot, Fill, LedgerEntry, Portfolio, Position
from papertrade.positions import service as position_service
from papertrade.trading import margin

FUNDING_KINDS = ("deposit", "top_up", "reset")


@dataclass(frozen=True, slots=True)
class PortfolioStats:
    portfolio: Portfolio
    equity: Decimal
    net_deposits: Decimal
    return_pct: Decimal
    max_drawdown_pct: Decimal
    trades: int
    win_rate: Decimal | None  # share of closing fills with a profit; None before any close


def max_drawdown(curve: Sequence[Decimal]) -> Decimal:
    """Largest peak-to-trough fall of an equity curve, as a fraction of the peak."""
    peak = ZERO
    worst = ZERO
    for value in curve:
        peak = max(peak, value)
        if peak > ZERO:
            worst = max(worst, (peak - value) / peak)
    return worst


async def compute(
    session: AsyncSession, feed: MarketFeed | None, portfolios: Sequence[Portfolio]
) -> list[PortfolioStats]:
    """Statistics of many portfolios with a handful of grouped queries."""
    ids = [p.id for p in portfolios]
    if not ids:
        return []
    deposits = dict(
        (
            await session.execute(
                select(LedgerEntry.portfolio_id, decimal_sum(LedgerEntry.amount))
                .where(LedgerEntry.portfolio_id.in_(ids), LedgerEntry.kind.in_(FUNDING_KINDS))
                .group_by(LedgerEntry.portfolio_id)
            )
        ).all()
    )
    fills = {
        row[0]: (row[1], row[2], row[3])
        for row in await session.execute(
            select(
                Fill.portfolio_id,
                func.count(Fill.id),
                func.sum(case((Fill.realized_pnl != 0, 1), else_=0)),
                func.sum(case((Fill.realized_pnl > 0, 1), else_=0)),
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
    curves: dict[int, list[Decimal]] = defaultdict(list)
    for snapshot in await session.scalars(
        select(EquitySnapshot)
        .where(EquitySnapshot.portfolio_id.in_(ids))
        .order_by(EquitySnapshot.portfolio_id, EquitySnapshot.time)
    ):
        curves[snapshot.portfolio_id].append(snapshot.equity)

    result = []
    for portfolio in portfolios:
        inputs = position_service.position_inputs(feed, positions[portfolio.id])
        equity = margin.account_state(portfolio.balance, inputs).equity
        funded = deposits.get(portfolio.id) or portfolio.initial_balance
        count, closes, wins = fills.get(portfolio.id, (0, 0, 0))
        result.append(
            PortfolioStats(
                portfolio=portfolio,
                equity=equity,
                net_deposits=funded,
                return_pct=(equity - funded) / funded * 100 if funded > ZERO else ZERO,
                # The start is the first peak, so a loss shows as drawdown as soon as it shows
                # as (negative) return, before the first periodic mark is taken.
                max_drawdown_pct=max_drawdown(
                    [portfolio.initial_balance, *curves[portfolio.id], equity]
                )
                * 100,
                trades=int(count or 0),
                win_rate=Decimal(int(wins or 0)) / Decimal(int(closes)) if closes else None,
            )
        )
    return result
