"""The self-backtest job: candles are loaded on the event loop, the simulation runs in the
process pool (CPU work never runs on the API's loop), the result is stored with the run."""

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.jobs.declare import queued, scheduled
from papertrade.jobs.run import JobRun
from papertrade.kit.time import now_ms
from papertrade.models import Strategy, StrategyBacktest, StrategyDeployment, StrategyVersion
from papertrade.strategies import candles, drift, live, pycheck
from papertrade.strategies.backtest import funding, report
from papertrade.strategies.backtest.simulate import Costs, simulate, simulate_orders
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl import ast
from papertrade.strategies.dsl.parse import parse
from papertrade.strategies.events import BacktestProgressed
from papertrade.strategies.sandbox import runner as sandbox
from papertrade.trading.fees import FeeSchedule


def compute(
    kind: str, source: str, bars: Bars, costs: Costs, cpu_s: int = sandbox.CPU_S
) -> dict[str, Any]:
    """The CPU part (runs in a pool process): parse, simulate, report. A Python strategy runs
    in a sandboxed process of its own (strategies/sandbox), fed bar by bar; the orders it asks
    for are all that comes back, and the simulation here makes the fills and the result."""
    if kind == "dsl":
        return report.build(simulate(parse(source), bars, costs), bars, costs)
    settings = pycheck.check(source).settings
    program = ast.Program(
        rules=(),
        leverage=int(settings.get("leverage", 1)),
        stop_loss_pct=settings.get("stop_loss_pct"),
        take_profit_pct=settings.get("take_profit_pct"),
    )
    columns = {name: bars.column(name) for name in ("open", "high", "low", "close", "volume")}
    columns["time"] = bars.time.astype(np.float64)
    try:
        intents = sandbox.run(source, columns, cpu_s=cpu_s)
    except sandbox.SandboxError as exc:
        raise ValueError(f"the strategy failed: {exc}") from None
    orders = [(i.bar, i.kind, i.size, i.sl, i.tp, i.limit) for i in intents]
    return report.build(simulate_orders(program, bars, costs, orders), bars, costs)


async def run_backtest(run: JobRun, backtest_id: int) -> dict[str, Any]:
    ctx = run.ctx
    async with ctx.db.unit_of_work() as session:
        backtest = await session.get(StrategyBacktest, backtest_id)
        if backtest is None or backtest.status == "done":
            return {"backtest_id": backtest_id, "skipped": True}  # idempotent on a re-run
        strategy = await session.get(Strategy, backtest.strategy_id)
        version = await session.scalar(
            select(StrategyVersion).where(
                StrategyVersion.strategy_id == backtest.strategy_id,
                StrategyVersion.number == backtest.version,
            )
        )
        assert strategy is not None  # kept while a backtest of it exists
        assert version is not None
        backtest.status = "running"
        source, kind = version.source, strategy.kind
        symbol, timeframe = backtest.symbol, backtest.timeframe
        start_ms, end_ms = backtest.start_ms, backtest.end_ms
        costs = Costs(
            initial_balance=backtest.initial_balance,
            fees=FeeSchedule(backtest.maker_fee_rate, backtest.taker_fee_rate),
            trade_from=await _trade_from(session, backtest),
        )
        deployment_id = backtest.deployment_id
        owner = Owner(strategy.user_id, backtest_id, strategy.id)
    await owner.tell(run, "running", 0.0, "")
    try:
        result = await _run(run, owner, kind, source, symbol, timeframe, start_ms, end_ms, costs)
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        await _finish(run, backtest_id, error=error)
        await owner.tell(run, "failed", 0.0, "", error=error)
        raise
    if deployment_id is not None:
        async with ctx.db.reader() as session:
            deployment = await session.get(StrategyDeployment, deployment_id)
            if deployment is not None:
                result["drift"] = await drift.compare(session, deployment, result)
    await _finish(run, backtest_id, result=result)
    await owner.tell(run, "done", 1.0, f"{result['metrics']['num_trades']} trades")
    return {"backtest_id": backtest_id, "num_trades": result["metrics"]["num_trades"]}


async def _trade_from(session: AsyncSession, backtest: StrategyBacktest) -> int:
    """A drift report trades from the deployment's first live bar; a backtest from its start."""
    if backtest.deployment_id is None:
        return 0
    return await drift.first_bar(session, backtest.deployment_id) or 0


@dataclass(frozen=True)
class Owner:
    """Whom a backtest's progress is told to, over the WebSocket (`backtests` channel)."""

    user_id: int
    backtest_id: int
    strategy_id: int

    async def tell(
        self, run: JobRun, status: str, done: float, text: str, *, error: str | None = None
    ) -> None:
        payload: dict[str, Any] = {
            "backtest_id": self.backtest_id,
            "strategy_id": self.strategy_id,
            "job_id": run.id,
            "status": status,
            "progress": round(done, 4),
            "progress_text": text,
        }
        if error is not None:
            payload["error"] = error[:2000]
        await run.ctx.events.publish([BacktestProgressed(user_id=self.user_id, payload=payload)])

    def reporter(self, run: JobRun) -> Callable[[float, str], Awaitable[None]]:
        """The job's progress (the jobs table, for polling) and the same on the socket."""

        async def progress(done: float, text: str = "") -> None:
            await run.progress(done, text)
            await self.tell(run, "running", done, text)

        return progress


async def _run(
    run: JobRun,
    owner: Owner,
    kind: str,
    source: str,
    symbol: str,
    timeframe: str,
    start_ms: int,
    end_ms: int,
    costs: Costs,
) -> dict[str, Any]:
    ctx = run.ctx
    progress = owner.reporter(run)
    klines = await candles.load(ctx, symbol, timeframe, start_ms, end_ms, progress)
    if len(klines) < 2:
        raise ValueError(
            f"the market feed has {len(klines)} closed {timeframe} candle(s) of {symbol} in the "
            "period; a backtest needs at least 2"
        )
    assert ctx.market is not None
    instrument = ctx.market.instruments()[symbol]
    try:
        history = await funding.in_period(ctx.market, symbol, start_ms, end_ms)
    except Exception:  # a feed without funding history: stated in the result (0 events)
        history = []
    costs = Costs(
        initial_balance=costs.initial_balance,
        fees=costs.fees,
        qty_step=instrument.step_size,
        min_qty=instrument.min_qty,
        funding=tuple((f.funding_time, f.funding_rate) for f in history),
        trade_from=costs.trade_from,
    )
    await progress(0.5, f"simulating {len(klines)} bars")
    # One pool process per user at a time, in fair turns; Python in a pool of its own.
    cpu_s = ctx.settings.strategy_backtest_cpu_s
    result: dict[str, Any] = await run.compute_for(
        owner.user_id,
        compute,
        kind,
        source,
        Bars.from_klines(klines),
        costs,
        cpu_s,
        sandboxed=kind == "python",
    )
    return result


async def _finish(
    run: JobRun, backtest_id: int, *, result: dict[str, Any] | None = None, error: str | None = None
) -> None:
    async with run.ctx.db.unit_of_work() as session:
        backtest = await session.get(StrategyBacktest, backtest_id)
        if backtest is None:
            return
        backtest.status = "done" if result is not None else "failed"
        backtest.error = error
        backtest.result = result
        backtest.metrics = result["metrics"] if result is not None else None
        backtest.finished_at = now_ms()


BACKTEST = queued("strategies.backtest", run_backtest, attempts=1)


async def evaluate_live(run: JobRun) -> dict[str, int]:
    """One pass; and when a bar closes before the next pass is due, wait for that close and
    pass again, so the deployments on it trade right at the close (bars of every timeframe
    close on a whole minute), not up to LIVE_EVERY_S later."""
    counts = await live.evaluate_due(run.ctx)
    wait_s = (60_000 - now_ms() % 60_000) / 1000
    if wait_s < LIVE_EVERY_S:
        await asyncio.sleep(wait_s + BAR_GRACE_S)
        for key, value in (await live.evaluate_due(run.ctx)).items():
            counts[key] += value
    return counts


LIVE_EVERY_S = 5  # how often a pass looks for deployments with a new bar
BAR_GRACE_S = 0.05  # after a bar's close, for the feed to have it
EVALUATE_LIVE = scheduled("strategies.evaluate_live", evaluate_live, every=lambda _: LIVE_EVERY_S)
JOBS = (BACKTEST, EVALUATE_LIVE)
