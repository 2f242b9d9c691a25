"""/v1/strategies: strategies, versions, self-backtests (and their legacy twins)."""

import asyncio
from decimal import Decimal
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.v1 import Caller, Ctx, MaybeCaller, Writer
from papertrade.context import AppContext
from papertrade.errors import ServiceUnavailable
from papertrade.jobs.runtime import Jobs
from papertrade.kit.ids import ID_MAX, Id
from papertrade.kit.time import now_ms
from papertrade.models import Portfolio, Strategy, StrategyBacktest
from papertrade.portfolios import service as portfolio_service
from papertrade.strategies import backtests, deployments, drift, service
from papertrade.strategies.jobs import BACKTEST
from papertrade.strategies.sandbox import isolation
from papertrade.strategies.schemas import (
    BacktestCreate,
    BacktestDetail,
    BacktestRead,
    DeploymentCreate,
    DeploymentRead,
    PortfolioStrategy,
    PortfolioStrategySignal,
    PortfolioStrategySignalPage,
    SignalPage,
    SignalRead,
    StrategyCreate,
    StrategyRead,
    StrategyUpdate,
    StrategyWithSource,
    VersionCreate,
    VersionRead,
)
from papertrade.tiers import limits as tier_limits

router = APIRouter(tags=["strategies"])


async def _with_source(ctx: Ctx, strategy: Strategy) -> StrategyWithSource:
    async with ctx.db.reader() as session:
        latest = await service.version(session, strategy, strategy.latest_version)
    return StrategyWithSource(
        **StrategyRead.model_validate(strategy).model_dump(), source=latest.source
    )


@router.post("/strategies", status_code=201, response_model=StrategyWithSource)
async def create_strategy(body: StrategyCreate, principal: Writer, ctx: Ctx) -> StrategyWithSource:
    """Create a DSL or Python strategy; its source is checked (never run) and saved as version 1."""
    async with ctx.transaction() as uow:
        strategy, version = await service.create(
            uow,
            principal.user_id,
            kind=body.kind,
            name=body.name,
            description=body.description,
            source=body.source,
            visibility=body.visibility,
            enforce_tier=ctx.settings.tiers_enforced,
        )
        read = StrategyRead.model_validate(strategy).model_dump()
    return StrategyWithSource(**read, source=version.source)


@router.get("/strategies/my", response_model=list[StrategyRead])
async def my_strategies(principal: Caller, ctx: Ctx) -> list[StrategyRead]:
    async with ctx.db.reader() as session:
        return [
            StrategyRead.model_validate(s)
            for s in await service.list_mine(session, principal.user_id)
        ]


@router.get("/strategies/by_code/{code}", response_model=StrategyWithSource)
async def strategy_by_code(code: str, principal: MaybeCaller, ctx: Ctx) -> StrategyWithSource:
    """Look up by short code (e.g. S0000001): public strategies for anyone, private ones for
    their owner only."""
    async with ctx.db.reader() as session:
        strategy = await service.get_by_code(session, principal, code)
    return await _with_source(ctx, strategy)


@router.get("/strategies/{strategy_id}", response_model=StrategyWithSource)
async def get_strategy(strategy_id: Id, principal: MaybeCaller, ctx: Ctx) -> StrategyWithSource:
    """One strategy with its latest source (a public one for anyone)."""
    async with ctx.db.reader() as session:
        strategy = await service.get_readable(session, principal, strategy_id)
    return await _with_source(ctx, strategy)


@router.patch("/strategies/{strategy_id}", response_model=StrategyRead)
async def update_strategy(
    strategy_id: Id, body: StrategyUpdate, principal: Writer, ctx: Ctx
) -> StrategyRead:
    """Rename, describe, or change visibility (a new source is a new version: POST …/versions)."""
    async with ctx.transaction() as uow:
        strategy = await service.get_owned(uow.session, principal, strategy_id, for_update=True)
        await _writable(ctx, uow.session, strategy)
        for field, value in body.model_dump(exclude_none=True).items():
            setattr(strategy, field, value)
        await uow.session.flush()
        return StrategyRead.model_validate(strategy)


@router.delete("/strategies/{strategy_id}", response_model=StrategyRead)
async def delete_strategy(strategy_id: Id, principal: Writer, ctx: Ctx) -> StrategyRead:
    """Delete: hidden everywhere and its live deployments stopped; history kept."""
    async with ctx.transaction() as uow:
        strategy = await service.get_owned(uow.session, principal, strategy_id, for_update=True)
        await service.soft_delete(uow, strategy)
        return StrategyRead.model_validate(strategy)


@router.post("/strategies/{strategy_id}/versions", status_code=201, response_model=VersionRead)
async def add_version(
    strategy_id: Id, body: VersionCreate, principal: Writer, ctx: Ctx
) -> VersionRead:
    """Save a new source as the next numbered version (older versions never change)."""
    async with ctx.transaction() as uow:
        strategy = await service.get_owned(uow.session, principal, strategy_id, for_update=True)
        await _writable(ctx, uow.session, strategy)
        return VersionRead.model_validate(await service.add_version(uow, strategy, body.source))


@router.get("/strategies/{strategy_id}/versions", response_model=list[VersionRead])
async def list_versions(strategy_id: Id, principal: MaybeCaller, ctx: Ctx) -> list[VersionRead]:
    async with ctx.db.reader() as session:
        strategy = await service.get_readable(session, principal, strategy_id)
        return [VersionRead.model_validate(v) for v in await service.versions(session, strategy)]


@router.get("/strategies/{strategy_id}/versions/{number}", response_model=VersionRead)
async def get_version(strategy_id: Id, number: Id, principal: MaybeCaller, ctx: Ctx) -> VersionRead:
    async with ctx.db.reader() as session:
        strategy = await service.get_readable(session, principal, strategy_id)
        return VersionRead.model_validate(await service.version(session, strategy, number))


@router.post("/strategies/{strategy_id}/backtests", status_code=202, response_model=BacktestRead)
async def start_backtest(
    strategy_id: Id, body: BacktestCreate, principal: Writer, ctx: Ctx, request: Request
) -> BacktestRead:
    """Queue a self-backtest of a version; poll GET …/backtests/{id} for progress and result."""
    async with ctx.transaction() as uow:
        strategy = await service.get_owned(uow.session, principal, strategy_id)
        await _writable(ctx, uow.session, strategy)
        if ctx.settings.tiers_enforced:  # how far back the tier's history reaches (B9)
            await tier_limits.check_backtest_period(
                uow.session, principal.user_id, now_ms(), body.start
            )
        await _may_run(ctx, uow.session, strategy)
        version = await service.version(
            uow.session, strategy, body.version or strategy.latest_version
        )
        fees = (Decimal(ctx.settings.maker_fee_rate), Decimal(ctx.settings.taker_fee_rate))
        row = await backtests.create(
            uow, backtests.plan(strategy, version, body, ctx.market, fees, now_ms())
        )
    return await _enqueue(ctx, request, row)


async def _may_run(ctx: Ctx, session: AsyncSession, strategy: Strategy) -> None:
    """A backtest needs a free place among the owner's backtests at once, and a Python one a
    machine that can isolate it (strategies/sandbox/isolation.py)."""
    await sandbox_ready(strategy)
    await tier_limits.check_backtests_at_once(
        session, strategy.user_id, now_ms(), enforced=ctx.settings.tiers_enforced
    )


async def sandbox_ready(strategy: Strategy) -> None:
    if strategy.kind != "python":
        return
    refused = await asyncio.to_thread(isolation.status)
    if refused:
        raise ServiceUnavailable(
            f"Python strategies cannot run on this server: {refused}.",
            code="python_sandbox_unavailable",
        )


async def _enqueue(ctx: Ctx, request: Request, row: StrategyBacktest) -> BacktestRead:
    """Queue the backtest's job, after the commit that made its row (it may start at once)."""
    jobs: Jobs = request.app.state.jobs
    job_id = await jobs.enqueue(BACKTEST, backtest_id=row.id)
    async with ctx.db.unit_of_work() as session:
        saved = await session.get(StrategyBacktest, row.id)
        if saved is not None and saved.job_id is None:
            saved.job_id = job_id
    row.job_id = job_id
    return BacktestRead.model_validate(row)


@router.get("/strategies/{strategy_id}/backtests", response_model=list[BacktestRead])
async def list_backtests(strategy_id: Id, principal: Caller, ctx: Ctx) -> list[BacktestRead]:
    """The strategy's backtests, newest first, with their metrics (not the full result)."""
    async with ctx.db.reader() as session:
        strategy = await service.get_owned(session, principal, strategy_id)
        return [
            BacktestRead.model_validate(await backtests.with_progress(session, row))
            for row in await backtests.list_for(session, strategy)
        ]


@router.get("/strategies/{strategy_id}/backtests/{backtest_id}", response_model=BacktestDetail)
async def get_backtest(
    strategy_id: Id, backtest_id: Id, principal: Caller, ctx: Ctx
) -> BacktestDetail:
    """One backtest: status and progress while it runs; metrics, curves, trades and stated
    assumptions once done."""
    async with ctx.db.reader() as session:
        strategy = await service.get_owned(session, principal, strategy_id)
        row = await backtests.get(session, strategy, backtest_id)
        read = await backtests.with_progress(session, row)
        return BacktestDetail.model_validate({**read, "result": row.result})


@router.post(
    "/strategies/{strategy_id}/deployments", status_code=201, response_model=DeploymentRead
)
async def deploy(
    strategy_id: Id, body: DeploymentCreate, principal: Writer, ctx: Ctx
) -> DeploymentRead:
    """Run a version live into one of your portfolios: evaluated on every closed bar of its
    timeframe, trading through the same order path as everything else."""
    async with ctx.transaction() as uow:
        strategy = await service.get_owned(uow.session, principal, strategy_id)
        await _writable(ctx, uow.session, strategy)
        await sandbox_ready(strategy)
        version = await service.version(
            uow.session, strategy, body.version or strategy.latest_version
        )
        row = await deployments.deploy(uow, principal, strategy, version, body, ctx.market)
        return DeploymentRead.model_validate(row)


@router.get("/strategies/{strategy_id}/deployments", response_model=list[DeploymentRead])
async def list_deployments(strategy_id: Id, principal: Caller, ctx: Ctx) -> list[DeploymentRead]:
    """Where the strategy runs: status (running, paused, stopped), last bar and last error."""
    async with ctx.db.reader() as session:
        strategy = await service.get_owned(session, principal, strategy_id)
        return [
            DeploymentRead.model_validate(d) for d in await deployments.list_for(session, strategy)
        ]


@router.post(
    "/strategies/{strategy_id}/deployments/{deployment_id}/drift",
    status_code=202,
    response_model=BacktestRead,
)
async def drift_report(
    strategy_id: Id, deployment_id: Id, principal: Writer, ctx: Ctx, request: Request
) -> BacktestRead:
    """Backtest the deployed version over the period it ran live, to compare side by side: poll
    GET …/backtests/{id}; its result's `drift` section has signals, fills, PnL and why they
    differ."""
    async with ctx.transaction() as uow:
        strategy = await service.get_owned(uow.session, principal, strategy_id)
        deployment = await deployments.get(uow.session, strategy, deployment_id)
        version = await service.version(uow.session, strategy, deployment.version)
        portfolio = await uow.session.get(Portfolio, deployment.portfolio_id)
        assert portfolio is not None  # a deployment's portfolio row is kept (soft delete)
        await _may_run(ctx, uow.session, strategy)
        first = await drift.first_bar(uow.session, deployment.id)
        row = await backtests.create(
            uow, drift.plan(strategy, version, deployment, portfolio, first)
        )
    return await _enqueue(ctx, request, row)


@router.post(
    "/strategies/{strategy_id}/deployments/{deployment_id}/{command}",
    response_model=DeploymentRead,
)
async def move_deployment(
    strategy_id: Id,
    deployment_id: Id,
    command: Literal["pause", "resume", "stop"],
    principal: Writer,
    ctx: Ctx,
) -> DeploymentRead:
    """pause (keeps the position, stops evaluating), resume, or stop (for good)."""
    async with ctx.transaction() as uow:
        strategy = await service.get_owned(uow.session, principal, strategy_id)
        if command == "resume":  # pausing and stopping stay possible on a read-only strategy
            await _writable(ctx, uow.session, strategy)
        row = await deployments.move(uow, strategy, deployment_id, command)
        return DeploymentRead.model_validate(row)


@router.get("/strategies/{strategy_id}/signals", response_model=SignalPage)
async def list_signals(
    strategy_id: Id,
    principal: MaybeCaller,
    ctx: Ctx,
    before_id: Annotated[int | None, Query(ge=1, le=ID_MAX)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> SignalPage:
    """Signal history, newest first: bar, rule, intended order, outcome. Public strategies'
    history is public; page with `before_id` = the previous page's `next_before_id`."""
    async with ctx.db.reader() as session:
        strategy = await service.get_readable(session, principal, strategy_id)
        rows = await deployments.signals(session, strategy, before_id, limit)
        page = [SignalRead.model_validate(r) for r in rows]
    return SignalPage(signals=page, next_before_id=page[-1].id if len(page) == limit else None)


@router.get("/portfolios/{portfolio_id}/strategies", response_model=list[PortfolioStrategy])
async def portfolio_strategies(
    portfolio_id: Id, principal: Caller, ctx: Ctx
) -> list[PortfolioStrategy]:
    """The strategies deployed into this portfolio and not stopped (running or paused)."""
    async with ctx.db.reader() as session:
        await portfolio_service.get_owned(session, principal, portfolio_id)
        rows = await deployments.in_portfolio(session, portfolio_id)
    return [
        PortfolioStrategy(
            deployment_id=d.id,
            strategy_id=st.id,
            strategy_code=st.code,
            strategy_name=st.name,
            kind=st.kind,
            version=d.version,
            symbol=d.symbol,
            timeframe=d.timeframe,
            status=d.status,
            last_error=d.last_error,
        )
        for d, st in rows
    ]


@router.get(
    "/portfolios/{portfolio_id}/strategy-signals", response_model=PortfolioStrategySignalPage
)
async def portfolio_strategy_signals(
    portfolio_id: Id,
    principal: Caller,
    ctx: Ctx,
    before_id: Annotated[int | None, Query(ge=1, le=ID_MAX)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> PortfolioStrategySignalPage:
    """The signals of the strategies deployed into this portfolio, newest first, each with the
    strategy that produced it; page with `before_id` = the previous page's `next_before_id`."""
    async with ctx.db.reader() as session:
        await portfolio_service.get_owned(session, principal, portfolio_id)
        rows = await deployments.portfolio_signals(session, portfolio_id, before_id, limit)
    page = [
        PortfolioStrategySignal(
            **SignalRead.model_validate(signal).model_dump(),
            strategy_id=strategy.id,
            strategy_code=strategy.code,
            strategy_name=strategy.name,
        )
        for signal, strategy in rows
    ]
    return PortfolioStrategySignalPage(
        signals=page, next_before_id=page[-1].id if len(page) == limit else None
    )


async def _writable(ctx: AppContext, session: AsyncSession, strategy: Strategy) -> None:
    """A strategy over its owner's tier after a downgrade is read-only (docs/tiers.md)."""
    if ctx.settings.tiers_enforced:
        await tier_limits.check_strategy_writable(session, strategy, now_ms())
