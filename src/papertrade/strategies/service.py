"""Strategies and their versions: create, read, update, delete, look up by code."""

from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.errors import NotFound
from papertrade.models import Strategy, StrategyDeployment, StrategyVersion
from papertrade.models.strategy import id_from_code
from papertrade.strategies.validate import summarize
from papertrade.tiers import limits
from papertrade.uow import AsyncWork


def _not_found() -> NotFound:
    return NotFound("Strategy not found.", code="strategy_not_found")


async def create(
    uow: AsyncWork,
    user_id: int,
    *,
    kind: str,
    name: str,
    description: str,
    source: str,
    visibility: str,
    enforce_tier: bool = True,
) -> tuple[Strategy, StrategyVersion]:
    """A new strategy with its source as version 1; refused past the user's tier (tier_limit)."""
    summary = summarize(kind, source)  # before anything is written: a bad source saves nothing
    if enforce_tier:
        await limits.check_strategies(uow.session, user_id, uow.now(), kind)
    strategy = Strategy(
        user_id=user_id,
        kind=kind,
        name=name,
        description=description,
        visibility=visibility,
        latest_version=1,
    )
    uow.session.add(strategy)
    await uow.session.flush()
    version = StrategyVersion(strategy_id=strategy.id, number=1, source=source, summary=summary)
    uow.session.add(version)
    await uow.session.flush()
    return strategy, version


async def add_version(uow: AsyncWork, strategy: Strategy, source: str) -> StrategyVersion:
    """A new immutable version numbered after the latest (the strategy row is locked)."""
    summary = summarize(strategy.kind, source)
    strategy.latest_version += 1
    version = StrategyVersion(
        strategy_id=strategy.id, number=strategy.latest_version, source=source, summary=summary
    )
    uow.session.add(version)
    await uow.session.flush()
    return version


def can_read(principal: Principal | None, strategy: Strategy) -> bool:
    return strategy.visibility == "public" or (
        principal is not None and principal.user_id == strategy.user_id
    )


async def get_owned(
    session: AsyncSession, principal: Principal, strategy_id: int, *, for_update: bool = False
) -> Strategy:
    """The caller's live strategy; anyone else's (or a deleted one) is a 404."""
    statement = select(Strategy).where(Strategy.id == strategy_id)
    if for_update:
        # FOR NO KEY UPDATE on PostgreSQL: the live pass, holding a deployment's row, still
        # writes signal rows that point at the strategy. A plain FOR UPDATE kept those out, and
        # a deletion (strategy locked, then its deployments stopped) deadlocked with the pass.
        statement = statement.with_for_update(key_share=True)
    strategy = await session.scalar(statement)
    if strategy is None or strategy.deleted_at is not None or strategy.user_id != principal.user_id:
        raise _not_found()
    return strategy


async def get_readable(
    session: AsyncSession, principal: Principal | None, strategy_id: int
) -> Strategy:
    """A public strategy for anyone, a private one for its owner only."""
    strategy = await session.get(Strategy, strategy_id)
    if strategy is None or strategy.deleted_at is not None or not can_read(principal, strategy):
        raise _not_found()
    return strategy


async def get_by_code(session: AsyncSession, principal: Principal | None, code: str) -> Strategy:
    strategy_id = id_from_code(code)
    if strategy_id is None:
        raise _not_found()
    return await get_readable(session, principal, strategy_id)


async def list_mine(session: AsyncSession, user_id: int) -> Sequence[Strategy]:
    result = await session.scalars(
        select(Strategy)
        .where(Strategy.user_id == user_id, Strategy.deleted_at.is_(None))
        .order_by(Strategy.id)
    )
    return result.all()


async def versions(session: AsyncSession, strategy: Strategy) -> Sequence[StrategyVersion]:
    result = await session.scalars(
        select(StrategyVersion)
        .where(StrategyVersion.strategy_id == strategy.id)
        .order_by(StrategyVersion.number)
    )
    return result.all()


async def version(session: AsyncSession, strategy: Strategy, number: int) -> StrategyVersion:
    row = await session.scalar(
        select(StrategyVersion).where(
            StrategyVersion.strategy_id == strategy.id, StrategyVersion.number == number
        )
    )
    if row is None:
        raise NotFound(
            f"Strategy {strategy.code} has no version {number} (latest: "
            f"{strategy.latest_version}).",
            code="strategy_version_not_found",
        )
    return row


async def soft_delete(uow: AsyncWork, strategy: Strategy) -> None:
    """Hidden from every listing; its live deployments stop. History is kept."""
    strategy.deleted_at = uow.now()
    await uow.session.execute(
        update(StrategyDeployment)
        .where(
            StrategyDeployment.strategy_id == strategy.id,
            StrategyDeployment.status != "stopped",
        )
        .values(status="stopped", updated_at=uow.now())
    )
