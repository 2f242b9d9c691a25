"""Periodic equity marks: the equity curve and the drawdown of every portfolio."""

from collections import defaultdict

from sqlalchemy import select

from papertrade.context import AppContext
from papertrade.kit.decimals import ZERO, money
from papertrade.kit.time import now_ms
from papertrade.models import EquitySnapshot, Portfolio, Position
from papertrade.positions import service as position_service
from papertrade.trading import margin


async def record_snapshots(ctx: AppContext) -> int:
    """Mark every live portfolio's equity at the current prices; returns how many were marked."""
    async with ctx.db.reader() as session:
        portfolios = (
            await session.scalars(select(Portfolio).where(Portfolio.deleted_at.is_(None)))
        ).all()
        positions: dict[int, list[Position]] = defaultdict(list)
        for row in await session.scalars(select(Position).where(Position.quantity != ZERO)):
            positions[row.portfolio_id].append(row)
    if not portfolios:
        return 0
    now = now_ms()
    # Only snapshot rows: the SQLite order writer's memory of portfolios stays good.
    async with ctx.transaction(keeps_writer_memory=True) as uow:
        for portfolio in portfolios:
            inputs = position_service.position_inputs(ctx.market, positions[portfolio.id])
            equity = margin.account_state(portfolio.balance, inputs).equity
            uow.session.add(
                EquitySnapshot(
                    portfolio_id=portfolio.id,
                    time=now,
                    balance=portfolio.balance,
                    equity=money(equity),
                )
            )
    return len(portfolios)
