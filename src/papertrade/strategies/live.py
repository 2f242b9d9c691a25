"""Running deployed DSL strategies on every closed bar of their timeframe.

A scheduled job (strategies.evaluate_live, on the engine leader) looks every few seconds for
deployments whose newest closed bar they have not yet seen. Deployments on the same symbol and
timeframe share one fetch of recent candles and one evaluator (an indicator used by several is
computed once). The orders of every deployment that fired on the bar go in together
(strategies/placing.py): one unit of work, `orders.service.place_all` — the order path, fees,
margin checks and events of every other order, with `source="strategy"` — and the signal rows
in bulk. Every signal is recorded with its outcome.

A refused order (margin, size, market closed…) is a signal with outcome `refused` and the reason;
anything else going wrong (the portfolio deleted, the symbol delisted, a bug) pauses the
deployment with the reason as `last_error` and a `signal.strategy_paused` event.
Bars missed while the service was down are not replayed: evaluation resumes at the newest bar.
"""

import asyncio
import functools
import logging
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
from sqlalchemy import or_, select

from papertrade.context import AppContext
from papertrade.kit.time import now_ms
from papertrade.market.feed import INTERVALS_MS
from papertrade.models import Strategy, StrategyDeployment, StrategyVersion
from papertrade.orders.pricing import Venue
from papertrade.strategies import pycheck
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl import ast
from papertrade.strategies.dsl.evaluate import Evaluator, warm_up_bars
from papertrade.strategies.dsl.parse import parse
from papertrade.strategies.events import StrategyPaused
from papertrade.strategies.placing import Member, Wanted, place_bar
from papertrade.strategies.sandbox import runner as sandbox

log = logging.getLogger("papertrade.strategies")
MAX_FETCH = 1500  # one klines request
PYTHON_BARS = 500  # recent bars a Python strategy is run over on each evaluation
PYTHON_CPU_S = 5  # CPU seconds of one live evaluation (the wall-clock limit is a setting)


@dataclass(frozen=True)
class Running:
    deployment_id: int
    strategy_id: int
    user_id: int
    portfolio_id: int
    version: int
    symbol: str
    timeframe: str
    last_bar_ms: int | None
    program: ast.Program  # a Python strategy's: no rules, its settings (leverage)
    kind: str = "dsl"
    source: str = ""


def newest_closed_open(timeframe: str, now: int) -> int:
    step = INTERVALS_MS[timeframe]
    return (now // step) * step - step


async def evaluate_due(ctx: AppContext, now: int | None = None) -> dict[str, int]:
    """Evaluate every running deployment that has a newly closed bar; returns counts."""
    now = now_ms() if now is None else now
    groups: dict[tuple[str, str], list[Running]] = defaultdict(list)
    for running in await _running(ctx, now):
        groups[(running.symbol, running.timeframe)].append(running)
    counts = {"evaluated": 0, "signals": 0, "paused": 0}
    for (symbol, timeframe), members in groups.items():
        bar_open = newest_closed_open(timeframe, now)
        try:
            bars = await _recent_bars(ctx, symbol, timeframe, bar_open, members)
        except Exception as exc:  # the feed failed for this symbol: every member pauses
            for running in members:
                await _pause(ctx, running, f"market data for {symbol} {timeframe}: {exc}")
                counts["paused"] += 1
            continue
        if bars is None:
            continue  # the feed has not published the bar yet; the next pass will
        evaluator = Evaluator(bars)
        batch: list[tuple[Running, Member]] = []
        for running in members:
            try:
                if running.kind == "python":
                    limit_s = ctx.settings.strategy_live_time_limit_s
                    wanted = await _python_orders(running, bars, limit_s)
                else:
                    wanted = _dsl_orders(running, evaluator)
            except Exception as exc:
                log.warning("strategy deployment %s paused: %s", running.deployment_id, exc)
                await _pause(ctx, running, f"{type(exc).__name__}: {exc}")
                counts["paused"] += 1
                continue
            batch.append((running, _member(running, wanted)))
        await _place(ctx, bar_open, batch, counts)
    return counts


async def _place(
    ctx: AppContext, bar_open: int, batch: list[tuple[Running, Member]], counts: dict[str, int]
) -> None:
    """Every member's orders in one unit of work; if that fails (a bug, not a refusal: those
    are signals), each member alone, so the one that fails is paused and the others trade."""
    if not batch:
        return
    venue = Venue.of(ctx)
    members = [member for _, member in batch]
    try:
        placed = await ctx.run_unit(lambda uow: place_bar(uow, venue, bar_open, members))
    except Exception as exc:
        if len(batch) == 1:
            running = batch[0][0]
            log.warning("strategy deployment %s paused: %s", running.deployment_id, exc)
            await _pause(ctx, running, f"{type(exc).__name__}: {exc}")
            counts["paused"] += 1
            return
        for one in batch:
            await _place(ctx, bar_open, [one], counts)
        return
    counts["evaluated"] += placed.claimed
    counts["signals"] += placed.signals
    by_id = {running.deployment_id: running for running, _ in batch}
    for member, reason in placed.orphaned:
        await _pause(ctx, by_id[member.deployment_id], reason)
        counts["paused"] += 1


def _member(running: Running, wanted: list[Wanted]) -> Member:
    return Member(
        deployment_id=running.deployment_id,
        strategy_id=running.strategy_id,
        user_id=running.user_id,
        portfolio_id=running.portfolio_id,
        version=running.version,
        symbol=running.symbol,
        wanted=wanted,
        may_rest=running.kind == "python",
    )


async def _running(ctx: AppContext, now: int) -> list[Running]:
    """The running deployments with a newly closed bar (filtered in the query: a pass with
    nothing due reads nothing)."""
    due = or_(
        StrategyDeployment.last_bar_ms.is_(None),
        *(
            (StrategyDeployment.timeframe == timeframe)
            & (StrategyDeployment.last_bar_ms < newest_closed_open(timeframe, now))
            for timeframe in pycheck.TIMEFRAMES
        ),
    )
    async with ctx.db.reader() as session:
        rows = (
            await session.execute(
                select(StrategyDeployment, Strategy.user_id, Strategy.kind, StrategyVersion.source)
                .join(Strategy, Strategy.id == StrategyDeployment.strategy_id)
                .join(
                    StrategyVersion,
                    (StrategyVersion.strategy_id == StrategyDeployment.strategy_id)
                    & (StrategyVersion.number == StrategyDeployment.version),
                )
                .where(StrategyDeployment.status == "running", Strategy.deleted_at.is_(None), due)
            )
        ).all()
    found = []
    for deployment, user_id, kind, source in rows:
        program = _program(kind, source)  # checked at save
        found.append(
            Running(
                deployment.id,
                deployment.strategy_id,
                user_id,
                deployment.portfolio_id,
                deployment.version,
                deployment.symbol,
                deployment.timeframe,
                deployment.last_bar_ms,
                program,
                kind,
                source,
            )
        )
    return found


async def _recent_bars(
    ctx: AppContext, symbol: str, timeframe: str, bar_open: int, members: list[Running]
) -> Bars | None:
    step = INTERVALS_MS[timeframe]
    need = min(MAX_FETCH, max(_warm_up(m) for m in members))
    assert ctx.market is not None
    klines = await ctx.market.klines(
        symbol, timeframe, bar_open - (need - 1) * step, bar_open + step - 1, need
    )
    closed = [k for k in klines if k.open_time <= bar_open]
    if not closed or closed[-1].open_time != bar_open:
        return None
    return Bars.from_klines(closed)


def wanted_for(rule: ast.Rule, program: ast.Program) -> list[Wanted]:
    """The orders a fired rule asks for (one-way positions, as B1), with the program's stop
    and target attached to its entries."""
    out = []
    reason = f"line {rule.line}: {rule.text}"
    for action in rule.actions:
        if isinstance(action, ast.Entry):
            size = action.size or program.size
            out.append(
                Wanted(
                    rule=reason,
                    action="buy" if action.side == "long" else "sell",
                    qty=Decimal(repr(size.amount)),
                    qty_type={"%": "percent_equity", "usdt": "quote", "qty": "base"}[size.unit],
                    leverage=program.leverage,
                    stop_loss_pct=program.stop_loss_pct,
                    take_profit_pct=program.take_profit_pct,
                    trailing_stop_pct=program.trailing_stop_pct,
                )
            )
        else:
            name = {"long": "close_long", "short": "close_short", "all": "close"}[action.which]
            out.append(Wanted(rule=reason, action=name))
    return out


@functools.lru_cache(maxsize=4096)
def _program(kind: str, source: str) -> ast.Program:
    """Parsed once per process, not once per pass (a pass every few seconds over a thousand
    deployments would spend its time in the parser)."""
    return program_of(kind, source)


def program_of(kind: str, source: str) -> ast.Program:
    """The DSL program, or for Python a rule-less program carrying its settings."""
    if kind == "dsl":
        return parse(source)
    settings = pycheck.check(source).settings
    return ast.Program(
        rules=(),
        symbol=settings.get("symbol"),
        timeframe=settings.get("timeframe"),
        leverage=int(settings.get("leverage", 1)),
        stop_loss_pct=settings.get("stop_loss_pct"),
        take_profit_pct=settings.get("take_profit_pct"),
    )


def _warm_up(running: Running) -> int:
    return PYTHON_BARS if running.kind == "python" else warm_up_bars(running.program)


def _dsl_orders(running: Running, evaluator: Evaluator) -> list[Wanted]:
    masks = evaluator.rule_masks(running.program)
    return [
        wanted
        for rule, mask in zip(running.program.rules, masks, strict=True)
        if mask[-1]
        for wanted in wanted_for(rule, running.program)
    ]


async def _python_orders(running: Running, bars: Bars, limit_s: float) -> list[Wanted]:
    """Run the strategy over the recent bars in its sandbox (a process of its own: this thread
    only waits for it, at most `limit_s` seconds) and take the orders it asked for on the newest
    one."""
    columns = {name: bars.column(name) for name in ("open", "high", "low", "close", "volume")}
    columns["time"] = bars.time.astype(np.float64)
    intents = await asyncio.to_thread(
        sandbox.run, running.source, columns, cpu_s=PYTHON_CPU_S, wall_s=limit_s
    )
    newest = len(bars) - 1
    program = running.program
    orders = []
    for intent in intents:
        if intent.bar != newest:
            continue
        if intent.kind == "close":
            orders.append(Wanted(rule="next()", action="close"))
            continue
        orders.append(
            Wanted(
                rule="next()",
                action="buy" if intent.kind == "long" else "sell",
                qty=Decimal(repr(intent.size * 100)),
                qty_type="percent_equity",
                leverage=program.leverage,
                limit=_decimal(intent.limit),
                stop_loss=_decimal(intent.sl),
                take_profit=_decimal(intent.tp),
                stop_loss_pct=None if intent.sl is not None else program.stop_loss_pct,
                take_profit_pct=None if intent.tp is not None else program.take_profit_pct,
            )
        )
    return orders


def _decimal(value: float | None) -> Decimal | None:
    return None if value is None else Decimal(repr(value))


async def _pause(ctx: AppContext, running: Running, reason: str) -> None:
    async with ctx.transaction() as uow:
        row = await uow.session.get(StrategyDeployment, running.deployment_id, with_for_update=True)
        if row is None or row.status != "running":
            return
        row.status = "paused"
        row.last_error = reason[:2000]
        uow.emit(
            StrategyPaused(
                portfolio_id=running.portfolio_id,
                payload={
                    "strategy_id": running.strategy_id,
                    "deployment_id": running.deployment_id,
                    "reason": row.last_error,
                },
            )
        )
