"""Portfolio lifecycle and ownership."""

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.db import CURRENT, Database
from papertrade.errors import NotFound
from papertrade.kit.decimals import ZERO
from papertrade.ledger.service import post
from papertrade.models import Portfolio
from papertrade.models.portfolio import code_of, id_from_code
from papertrade.portfolios import credentials
from papertrade.tiers import limits
from papertrade.trading.enums import LedgerKind
from papertrade.uow import AsyncWork


async def create(
    uow: AsyncWork,
    user_id: int,
    *,
    name: str,
    description: str,
    initial_balance: Decimal,
    visibility: str,
    maker_fee_rate: Decimal,
    taker_fee_rate: Decimal,
    enforce_tier: bool = True,
    realism: str = "mark",
) -> Portfolio:
    """A new portfolio funded with its initial balance (recorded as a deposit); refused past
    the user's tier limit (tier_limit, docs/tiers.md)."""
    if enforce_tier:
        await limits.check_portfolios(uow.session, user_id, uow.now())
    portfolio = Portfolio(
        user_id=user_id,
        name=name,
        description=description,
        visibility=visibility,
        initial_balance=initial_balance,
        balance=ZERO,
        maker_fee_rate=maker_fee_rate,
        taker_fee_rate=taker_fee_rate,
        dual_side_position=False,  # one-way mode, as every portfolio starts
        realism=realism,
    )
    uow.session.add(portfolio)
    await uow.session.flush()  # its id, for the ledger row
    post(uow, portfolio, LedgerKind.DEPOSIT, initial_balance, note="initial balance")
    return portfolio


async def get_owned(
    session: AsyncSession, principal: Principal, portfolio_id: int, *, for_update: bool = False
) -> Portfolio:
    """The caller's live portfolio; anyone else's (or a deleted one) is a 404."""
    statement = select(Portfolio).where(Portfolio.id == portfolio_id)
    if for_update:
        statement = statement.with_for_update().execution_options(**CURRENT)
    return check_owned(await session.scalar(statement), principal, portfolio_id)


# Every column of a portfolio, read as plain values (no ORM object: a poll of a portfolio is a
# bot's most frequent request, and loading the entity cost more than the statement). Built once:
# building a statement per request costs as much again as running it.
_READ = select(*Portfolio.__table__.columns).where(Portfolio.id == bindparam("portfolio_id"))


async def read_owned(db: Database, principal: Principal, portfolio_id: int) -> dict[str, Any]:
    """The caller's live portfolio as a dict of its columns and its `code` (what get_owned
    checks, for a read); anyone else's, or a deleted one, is a 404."""
    row = await db.read_row(_READ, {"portfolio_id": portfolio_id})
    if (
        row is None
        or row["deleted_at"] is not None
        or row["id"] != portfolio_id
        or row["user_id"] != principal.user_id
        or principal.portfolio_id not in (None, portfolio_id)
    ):
        raise NotFound("Portfolio not found.", code="portfolio_not_found")
    row["code"] = code_of(portfolio_id)
    return row


def is_owner(principal: Principal, portfolio: Portfolio) -> bool:
    """Whether the caller may see and manage `portfolio` (a credential bound to another portfolio
    of the same user may not)."""
    return portfolio.user_id == principal.user_id and principal.portfolio_id in (
        None,
        portfolio.id,
    )


def check_owned(portfolio: Portfolio | None, principal: Principal, portfolio_id: int) -> Portfolio:
    """`portfolio` when it is the caller's live portfolio `portfolio_id`, else a 404."""
    if (
        portfolio is None
        or portfolio.deleted_at is not None
        or portfolio.id != portfolio_id
        or not is_owner(principal, portfolio)
    ):
        raise NotFound("Portfolio not found.", code="portfolio_not_found")
    return portfolio


async def get_by_code(session: AsyncSession, principal: Principal | None, code: str) -> Portfolio:
    """Look up by short code: public ones for everyone, private ones for their owner only."""
    portfolio_id = id_from_code(code)
    portfolio = await session.get(Portfolio, portfolio_id) if portfolio_id else None
    if portfolio is None or portfolio.deleted_at is not None:
        raise NotFound("Portfolio not found.", code="portfolio_not_found")
    if portfolio.visibility != "public" and (
        principal is None or not is_owner(principal, portfolio)
    ):
        raise NotFound("Portfolio not found.", code="portfolio_not_found")
    return portfolio


async def list_mine(session: AsyncSession, user_id: int) -> Sequence[Portfolio]:
    result = await session.scalars(
        select(Portfolio)
        .where(Portfolio.user_id == user_id, Portfolio.deleted_at.is_(None))
        .order_by(Portfolio.id)
    )
    return result.all()


async def soft_delete(uow: AsyncWork, portfolio: Portfolio) -> None:
    """Hide the portfolio; its rows stay for history and its credentials stop working."""
    portfolio.deleted_at = uow.now()
    await credentials.revoke_all(uow, portfolio.id)
