"""Equity, the ledger, reset and top-up."""

from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.conditional import service as conditional_service
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO
from papertrade.ledger.events import BalanceChanged
from papertrade.ledger.service import post
from papertrade.market.feed import MarketFeed
from papertrade.models import Fill, LedgerEntry, Portfolio
from papertrade.orders import service as order_service
from papertrade.positions import service as position_service
from papertrade.trading import margin
from papertrade.trading.enums import LedgerKind
from papertrade.uow import AsyncWork


async def ledger_balance(session: AsyncSession, portfolio_id: int) -> Decimal:
    """The balance recomputed from every ledger entry."""
    total = await session.scalar(
        select(decimal_sum(LedgerEntry.amount)).where(LedgerEntry.portfolio_id == portfolio_id)
    )
    return total if total is not None else ZERO


async def account_state(
    session: AsyncSession, market: MarketFeed | None, portfolio: Portfolio
) -> margin.AccountState:
    positions = await position_service.load_positions(session, portfolio.id)
    open_margin = await position_service.open_order_margin(session, portfolio.id)
    state, _ = position_service.account(market, portfolio, list(positions.values()), open_margin)
    return state


def _entry(
    uow: AsyncWork, portfolio: Portfolio, kind: LedgerKind, amount: Decimal, note: str
) -> None:
    post(uow, portfolio, kind, amount, note=note)
    uow.emit(BalanceChanged(portfolio_id=portfolio.id, balance=portfolio.balance))


def top_up(uow: AsyncWork, portfolio: Portfolio, amount: Decimal) -> None:
    """Add simulated USDT to the wallet."""
    _entry(uow, portfolio, LedgerKind.TOP_UP, amount, "top-up")


async def reset(uow: AsyncWork, portfolio: Portfolio, initial_balance: Decimal | None) -> None:
    """Cancel orders (waiting stops too), drop positions and restore the starting balance; keys
    stay valid."""
    await order_service.cancel_all(uow, portfolio.id)
    await conditional_service.cancel_all(uow, portfolio.id, reason="the portfolio was reset")
    positions = await position_service.load_positions(uow.session, portfolio.id)
    for position in positions.values():
        position.quantity = ZERO
        position.entry_price = ZERO
        if position.isolated_margin != ZERO:  # an isolated position's margin comes back first
            post(
                uow,
                portfolio,
                LedgerKind.ISOLATED_MARGIN,
                position.isolated_margin,
                symbol=position.symbol,
                note="reset",
            )
            position.isolated_margin = ZERO
    if initial_balance is not None:
        portfolio.initial_balance = initial_balance
    _entry(uow, portfolio, LedgerKind.RESET, portfolio.initial_balance - portfolio.balance, "reset")


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
