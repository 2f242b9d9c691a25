"""Equity, the ledger, reset and top-up."""

from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.context import AppContext
from papertrade.events import Event, emit
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO
from papertrade.models import EquitySnapshot, Fill, LedgerEntry, Portfolio
from papertrade.orders import service as order_service
from papertrade.positions import service as position_service
from papertrade.trading import margin


async def ledger_balance(session: AsyncSession, portfolio_id: int) -> Decimal:
    """The balance recomputed from every ledger entry."""
    total = await session.scalar(
        select(decimal_sum(LedgerEntry.amount)).where(LedgerEntry.portfolio_id == portfolio_id)
    )
    return total if total is not None else ZERO


async def account_state(
    session: AsyncSession, ctx: AppContext, portfolio: Portfolio
) -> margin.AccountState:
    positions = await position_service.load_positions(session, portfolio.id)
    open_margin = await position_service.open_order_margin(session, portfolio.id)
    state, _ = position_service.account(
        ctx.market, portfolio, list(positions.values()), open_margin
    )
    return state


def _entry(
    session: AsyncSession, portfolio: Portfolio, kind: str, amount: Decimal, note: str
) -> None:
    # Top-ups and starting balances come in with at most 6 decimals (the request models say
    # so) and every other ledger amount is booked at 6 (usdt6), so a reset's difference is
    # at 6 decimals too: the balance moves by exactly the amount listed.
    portfolio.balance = portfolio.balance + amount
    session.add(
        LedgerEntry(
            portfolio_id=portfolio.id,
            kind=kind,
            amount=amount,
            balance_after=portfolio.balance,
            note=note,
        )
    )
    emit(session, Event("balance.changed", portfolio.id, {"balance": portfolio.balance}))


def top_up(session: AsyncSession, portfolio: Portfolio, amount: Decimal) -> None:
    """Add simulated USDT to the wallet."""
    _entry(session, portfolio, "top_up", amount, "top-up")


async def reset(
    session: AsyncSession, ctx: AppContext, portfolio: Portfolio, initial_balance: Decimal | None
) -> None:
    """Cancel orders, drop positions and restore the starting balance; keys stay valid."""
    await order_service.cancel_all(session, ctx, portfolio.id)
    positions = await position_service.load_positions(session, portfolio.id)
    for position in positions.values():
        position.quantity = ZERO
        position.entry_price = ZERO
    if initial_balance is not None:
        portfolio.initial_balance = initial_balance
    _entry(session, portfolio, "reset", portfolio.initial_balance - portfolio.balance, "reset")


async def ledger(
    session: AsyncSession, portfolio_id: int, before_id: int | None, limit: int
) -> Sequence[LedgerEntry]:
    statement = select(LedgerEntry).where(LedgerEntry.portfolio_id == portfolio_id)
    if before_id is not None:
        statement = statement.where(LedgerEntry.id < before_id)
    return (await session.scalars(statement.order_by(LedgerEntry.id.desc()).limit(limit))).all()


async def fills(
    session: AsyncSession,
    portfolio_id: int,
    *,
    symbol: str | None = None,
    before_id: int | None = None,
    limit: int = 100,
) -> Sequence[Fill]:
    statement = select(Fill).where(Fill.portfolio_id == portfolio_id)
    if symbol is not None:
        statement = statement.where(Fill.symbol == symbol)
    if before_id is not None:
        statement = statement.where(Fill.id < before_id)
    return (await session.scalars(statement.order_by(Fill.id.desc()).limit(limit))).all()


async def snapshots(
    session: AsyncSession, portfolio_id: int, limit: int
) -> Sequence[EquitySnapshot]:
    rows = await session.scalars(
        select(EquitySnapshot)
        .where(EquitySnapshot.portfolio_id == portfolio_id)
        .order_by(EquitySnapshot.time.desc())
        .limit(limit)
    )
    return list(reversed(rows.all()))
