"""The wallet's rules: one wallet per user, made on first use; every change through post_wallet.

The wallet holds real money only: what came from outside (recharge, operator credit) and what
other users paid from their wallets (subscription revenue). Portfolio money is paper (free
top-ups), so nothing moves it into a wallet: a transfer goes one way, wallet → portfolio, and
books both ledgers in one unit of work, so either both rows exist or neither. Rows are locked
wallet first, then portfolio, always in that order (no deadlock between two transfers on
PostgreSQL).
"""

from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.accounts import returns
from papertrade.auth.principal import Principal
from papertrade.db import CURRENT
from papertrade.errors import BadRequest
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO, usdt6
from papertrade.ledger.events import BalanceChanged
from papertrade.ledger.service import post, post_wallet
from papertrade.market.feed import MarketFeed
from papertrade.models import Wallet, WalletEntry
from papertrade.portfolios import service as portfolios
from papertrade.tiers import limits as tier_limits
from papertrade.trading.enums import LedgerKind
from papertrade.uow import AsyncWork


def user_actor(user_id: int) -> str:
    return f"user:{user_id}"


async def find(session: AsyncSession, user_id: int) -> Wallet | None:
    return await session.scalar(select(Wallet).where(Wallet.user_id == user_id))


async def locked(uow: AsyncWork, user_id: int) -> Wallet:
    """The user's wallet, locked for this unit of work (made empty on first use)."""
    statement = (
        select(Wallet)
        .where(Wallet.user_id == user_id)
        .with_for_update()
        .execution_options(**CURRENT)
    )
    wallet = await uow.session.scalar(statement)
    if wallet is not None:
        return wallet
    try:
        async with uow.session.begin_nested():  # another request may be making it right now
            uow.session.add(Wallet(user_id=user_id, balance=ZERO))
    except IntegrityError:
        pass
    wallet = await uow.session.scalar(statement)
    assert wallet is not None
    return wallet


async def ledger_balance(session: AsyncSession, wallet_id: int) -> Decimal:
    """The balance recomputed from every wallet entry."""
    total = await session.scalar(
        select(decimal_sum(WalletEntry.amount)).where(WalletEntry.wallet_id == wallet_id)
    )
    return total if total is not None else ZERO


async def history(
    session: AsyncSession, user_id: int, *, before_id: int | None, limit: int
) -> Sequence[WalletEntry]:
    """The wallet's entries, newest first (page with before_id)."""
    statement = select(WalletEntry).join(Wallet).where(Wallet.user_id == user_id)
    if before_id is not None:
        statement = statement.where(WalletEntry.id < before_id)
    rows = await session.scalars(statement.order_by(WalletEntry.id.desc()).limit(limit))
    return rows.all()


async def pay(
    uow: AsyncWork,
    user_id: int,
    kind: LedgerKind,
    amount: Decimal,
    *,
    actor: str,
    reference: str | None = None,
    note: str = "",
) -> Wallet:
    """Take `amount` from the user's wallet (insufficient_funds when it holds less)."""
    wallet = await locked(uow, user_id)
    post_wallet(uow, wallet, kind, -amount, actor=actor, reference=reference, note=note)
    return wallet


async def credit(
    uow: AsyncWork,
    user_id: int,
    kind: LedgerKind,
    amount: Decimal,
    *,
    actor: str,
    reference: str | None = None,
    note: str = "",
) -> Wallet:
    """Add `amount` to the user's wallet."""
    wallet = await locked(uow, user_id)
    post_wallet(uow, wallet, kind, amount, actor=actor, reference=reference, note=note)
    return wallet


def paper_stays_paper() -> BadRequest:
    return BadRequest(
        "Portfolio money is paper (a free top-up makes more), so it cannot move into the wallet: "
        "the wallet holds only money that came from outside (recharge) and what other users paid "
        "you. Transfers go one way, wallet to portfolio.",
        code="portfolio_money_is_paper",
    )


async def transfer(
    uow: AsyncWork,
    market: MarketFeed | None,
    principal: Principal,
    portfolio_id: int,
    amount: Decimal,
    *,
    to_portfolio: bool,
    enforce_tier: bool = False,
) -> Wallet:
    """Move `amount` from the caller's wallet into one of the caller's portfolios (at most what
    the wallet holds). The other way is refused (portfolio_money_is_paper): paper money never
    becomes wallet money. The portfolio's equity is marked just before (a cash flow: its
    time-weighted return ends the sub-period there, exactly)."""
    if not to_portfolio:
        raise paper_stays_paper()
    amount = usdt6(amount)
    wallet = await locked(uow, principal.user_id)
    portfolio = await portfolios.get_owned(uow.session, principal, portfolio_id, for_update=True)
    actor = user_actor(principal.user_id)
    kind = LedgerKind.WALLET_TRANSFER
    if enforce_tier:  # a read-only portfolio (over the tier) takes nothing in
        await tier_limits.check_portfolio_writable(uow.session, portfolio.id, uow.now())
    note = f"to portfolio {portfolio.code}"
    if market is not None:
        await returns.mark_before_flow(uow, market, portfolio)
    post_wallet(uow, wallet, kind, -amount, actor=actor, portfolio_id=portfolio.id, note=note)
    post(uow, portfolio, kind, amount, note="from the wallet")
    uow.emit(BalanceChanged(portfolio_id=portfolio.id, balance=portfolio.balance))
    return wallet
