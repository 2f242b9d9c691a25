"""Deploying a version into one of the owner's portfolios; pause, resume, stop; signals."""

from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.errors import Conflict, NotFound
from papertrade.market.feed import MarketFeed
from papertrade.models import Strategy, StrategyDeployment, StrategySignal, StrategyVersion
from papertrade.orders.pricing import instrument_of
from papertrade.portfolios import service as portfolio_service
from papertrade.strategies.errors import NotRunnable
from papertrade.strategies.live import program_of
from papertrade.strategies.schemas import DeploymentCreate
from papertrade.trading import conditional as rules
from papertrade.uow import AsyncWork

# What each command does to a deployment's status: the statuses it may leave, and where to.
MOVES = {
    "pause": ({"running"}, "paused"),
    "resume": ({"paused"}, "running"),
    "stop": ({"running", "paused"}, "stopped"),
}


async def deploy(
    uow: AsyncWork,
    principal: Principal,
    strategy: Strategy,
    version: StrategyVersion,
    body: DeploymentCreate,
    feed: MarketFeed | None,
) -> StrategyDeployment:
    program = program_of(strategy.kind, version.source)
    trailing = program.trailing_stop_pct
    if (
        trailing
        and not rules.MIN_CALLBACK_RATE <= Decimal(repr(trailing)) <= rules.MAX_CALLBACK_RATE
    ):
        raise NotRunnable(
            f"trailing_stop {trailing:g}% cannot run live: a live trailing stop trails by 0.1% "
            "to 10% (as on Binance). Backtests take any distance."
        )
    await portfolio_service.get_owned(uow.session, principal, body.portfolio_id)
    symbol = (body.symbol or program.symbol or "").upper()
    if not symbol:
        raise NotRunnable("Name a symbol: the source sets none (e.g. 'symbol BTCUSDT').")
    instrument_of(feed, symbol)
    deployment = StrategyDeployment(
        strategy_id=strategy.id,
        version=version.number,
        portfolio_id=body.portfolio_id,
        symbol=symbol,
        timeframe=body.timeframe or program.timeframe or "1h",
        status="running",
    )
    uow.session.add(deployment)
    await uow.session.flush()
    return deployment


async def list_for(session: AsyncSession, strategy: Strategy) -> Sequence[StrategyDeployment]:
    rows = await session.scalars(
        select(StrategyDeployment)
        .where(StrategyDeployment.strategy_id == strategy.id)
        .order_by(StrategyDeployment.id)
    )
    return rows.all()


async def get(
    session: AsyncSession, strategy: Strategy, deployment_id: int, *, for_update: bool = False
) -> StrategyDeployment:
    row = await session.get(StrategyDeployment, deployment_id, with_for_update=for_update)
    if row is None or row.strategy_id != strategy.id:
        raise NotFound("Deployment not found.", code="deployment_not_found")
    return row


async def move(
    uow: AsyncWork, strategy: Strategy, deployment_id: int, command: str
) -> StrategyDeployment:
    row = await get(uow.session, strategy, deployment_id, for_update=True)
    allowed, target = MOVES[command]
    if row.status not in allowed:
        raise Conflict(
            f"Deployment {row.id} is {row.status}; it cannot {command}.",
            code="deployment_state",
        )
    row.status = target
    if target == "running":
        row.last_error = None
    return row


async def signals(
    session: AsyncSession, strategy: Strategy, before_id: int | None, limit: int
) -> Sequence[StrategySignal]:
    statement = select(StrategySignal).where(StrategySignal.strategy_id == strategy.id)
    if before_id is not None:
        statement = statement.where(StrategySignal.id < before_id)
    rows = await session.scalars(statement.order_by(StrategySignal.id.desc()).limit(limit))
    return rows.all()


async def in_portfolio(
    session: AsyncSession, portfolio_id: int, statuses: Sequence[str] = ("running", "paused")
) -> Sequence[tuple[StrategyDeployment, Strategy]]:
    """The deployments into `portfolio_id` (by default those still trading it), with their
    strategies, oldest first."""
    rows = await session.execute(
        select(StrategyDeployment, Strategy)
        .join(Strategy, Strategy.id == StrategyDeployment.strategy_id)
        .where(
            StrategyDeployment.portfolio_id == portfolio_id,
            StrategyDeployment.status.in_(statuses),
        )
        .order_by(StrategyDeployment.id)
    )
    return [(d, st) for d, st in rows.all()]


async def portfolio_signals(
    session: AsyncSession, portfolio_id: int, before_id: int | None, limit: int
) -> Sequence[tuple[StrategySignal, Strategy]]:
    """The signals of every strategy deployed into `portfolio_id` (ever), newest first."""
    placed = await session.execute(
        select(StrategyDeployment.id, StrategyDeployment.strategy_id).where(
            StrategyDeployment.portfolio_id == portfolio_id
        )
    )
    pairs = [(d, st) for d, st in placed.all()]
    if not pairs:
        return []
    statement = (
        select(StrategySignal, Strategy)
        .join(Strategy, Strategy.id == StrategySignal.strategy_id)
        .where(
            StrategySignal.strategy_id.in_({s for _, s in pairs}),
            StrategySignal.deployment_id.in_({d for d, _ in pairs}),
        )
    )
    if before_id is not None:
        statement = statement.where(StrategySignal.id < before_id)
    rows = await session.execute(statement.order_by(StrategySignal.id.desc()).limit(limit))
    return [(signal, strategy) for signal, strategy in rows.all()]
