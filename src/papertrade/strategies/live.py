"""Running deployed DSL strategies on every closed bar of their timeframe.

A scheduled job (strategies.evaluate_live, on the engine leader) looks every few seconds for
deployments whose newest closed bar they have not yet seen. Deployments on the same symbol and
timeframe share one fetch of recent candles and one evaluator (an indicator used by several is
computed once). Each rule that fires on the newest bar becomes commands for the webhook
executor: the same `place_one` → `place_all` order path, fees, margin checks and events as
every other order, with `source="strategy"`. Every signal is recorded with its outcome.

A refused order (margin, size, market closed…) is a signal with outcome `refused` and the reason;
anything else going wrong (the portfolio deleted, the symbol delisted, a bug) pauses the
deployment with the reason as `last_error` and a `signal.strategy_paused` event.
Bars missed while the service was down are not replayed: evaluation resumes at the newest bar.
"""

import asyncio
import logging
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.kit.time import now_ms
from papertrade.market.feed import INTERVALS_MS
from papertrade.models import (
    Position,
    Strategy,
    StrategyDeployment,
    StrategySignal,
    StrategyVersion,
)
from papertrade.orders.pricing import Venue
from papertrade.portfolios import service as portfolio_service
from papertrade.strategies import pycheck
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl import ast
from papertrade.strategies.dsl.evaluate import Evaluator, warm_up_bars
from papertrade.strategies.dsl.parse import parse
from papertrade.strategies.events import StrategyPaused, StrategySignalled
from papertrade.strategies.sandbox import runner as sandbox
from papertrade.trading.errors import TradingRuleError
from papertrade.uow import AsyncWork
from papertrade.webhooks.command import Command
from papertrade.webhooks.execute import execute

log = logging.getLogger("papertrade.strategies")
MAX_FETCH = 1500  # one klines request
PYTHON_BARS = 500  # recent bars a Python strategy is run over on each evaluation


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
    for running in await _running(ctx):
        if running.last_bar_ms is None or running.last_bar_ms < newest_closed_open(
            running.timeframe, now
        ):
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
        for running in members:
            try:
                if running.kind == "python":
                    orders = await _python_orders(running, bars)
                else:
                    orders = _dsl_orders(running, evaluator)
                counts["signals"] += await _act(ctx, running, bar_open, orders)
                counts["evaluated"] += 1
            except Exception as exc:
                log.warning("strategy deployment %s paused: %s", running.deployment_id, exc)
                await _pause(ctx, running, f"{type(exc).__name__}: {exc}")
                counts["paused"] += 1
    return counts


async def _running(ctx: AppContext) -> list[Running]:
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
                .where(StrategyDeployment.status == "running", Strategy.deleted_at.is_(None))
            )
        ).all()
    programs: dict[str, ast.Program] = {}
    found = []
    for deployment, user_id, kind, source in rows:
        program = programs.get(source)
        if program is None:
            program = programs[source] = program_of(kind, source)  # checked at save
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


def commands_for(rule: ast.Rule, program: ast.Program, symbol: str) -> list[Command]:
    """The webhook executor's commands for a fired rule (one-way positions, as B1)."""
    out = []
    for action in rule.actions:
        if isinstance(action, ast.Entry):
            size = action.size or program.size
            qty_type = {"%": "percent_equity", "usdt": "quote", "qty": "base"}[size.unit]
            out.append(
                Command(
                    line=rule.line,
                    action="buy" if action.side == "long" else "sell",
                    symbol=symbol,
                    qty=Decimal(repr(size.amount)),
                    qty_type=qty_type,
                    leverage=program.leverage,
                )
            )
        else:
            name = {"long": "close_long", "short": "close_short", "all": "close"}[action.which]
            out.append(Command(line=rule.line, action=name, symbol=symbol))
    return out


def _already(command: Command, quantity: Decimal) -> str | None:
    """Why an entry would do nothing (no pyramiding, as in backtests), else None."""
    if command.action == "buy" and quantity > 0:
        return "already long: no pyramiding"
    if command.action == "sell" and quantity < 0:
        return "already short: no pyramiding"
    return None


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


def _dsl_orders(running: Running, evaluator: Evaluator) -> list[tuple[str, Command]]:
    masks = evaluator.rule_masks(running.program)
    return [
        (f"line {rule.line}: {rule.text}", command)
        for rule, mask in zip(running.program.rules, masks, strict=True)
        if mask[-1]
        for command in commands_for(rule, running.program, running.symbol)
    ]


async def _python_orders(running: Running, bars: Bars) -> list[tuple[str, Command]]:
    """Run the strategy over the recent bars in its sandbox (a process of its own: this thread
    only waits for it) and take the orders it asked for on the newest one."""
    columns = {
        name: bars.column(name).tolist() for name in ("open", "high", "low", "close", "volume")
    }
    columns["time"] = bars.time.tolist()
    intents = await asyncio.to_thread(sandbox.run, running.source, columns, cpu_s=5, wall_s=20)
    newest = len(bars) - 1
    orders = []
    for intent in intents:
        if intent.bar != newest:
            continue
        if intent.kind == "close":
            command = Command(line=0, action="close", symbol=running.symbol)
        else:
            command = Command(
                line=0,
                action="buy" if intent.kind == "long" else "sell",
                symbol=running.symbol,
                qty=Decimal(repr(intent.size * 100)),
                qty_type="percent_equity",
                leverage=running.program.leverage,
            )
        orders.append(("next()", command))
    return orders


async def _act(
    ctx: AppContext, running: Running, bar_open: int, orders: list[tuple[str, Command]]
) -> int:
    principal = Principal(
        kind="api_key",  # the owner acting through the deployment (never a key of theirs)
        user_id=running.user_id,
        credential_id=running.deployment_id,
        portfolio_id=running.portfolio_id,
    )
    if not await _claim(ctx, running, bar_open):
        return 0  # another pass (an overlapping run, another process) has this bar
    venue = Venue.of(ctx)
    for rule, command in orders:
        await _one(ctx, venue, principal, running, bar_open, rule, command)
    return len(orders)


async def _claim(ctx: AppContext, running: Running, bar_open: int) -> bool:
    """Mark the bar as evaluated, atomically: only the pass that moves it acts on it, so a
    bar's signals are emitted once however many passes overlap."""
    async with ctx.db.unit_of_work() as session:
        moved = await session.execute(
            update(StrategyDeployment)
            .where(
                StrategyDeployment.id == running.deployment_id,
                StrategyDeployment.status == "running",
                or_(
                    StrategyDeployment.last_bar_ms.is_(None),
                    StrategyDeployment.last_bar_ms < bar_open,
                ),
            )
            .values(last_bar_ms=bar_open)
        )
        return bool(getattr(moved, "rowcount", 0) == 1)


async def _one(
    ctx: AppContext,
    venue: Venue,
    principal: Principal,
    running: Running,
    bar_open: int,
    rule: str,
    command: Command,
) -> None:
    intent = {k: v for k, v in command.as_json().items() if k not in ("line", "max_lag_s")}
    try:
        async with ctx.transaction() as uow:
            portfolio = await portfolio_service.get_owned(
                uow.session, principal, running.portfolio_id, for_update=True
            )
            held = await _position(uow.session, running.portfolio_id, running.symbol)
            skipped = _already(command, held)
            if skipped is not None:
                outcome, reason, order_id = "skipped", skipped, None
            else:
                done = await execute(uow, venue, principal, portfolio, [command], "strategy")
                order = done.orders[0] if done.orders else None
                outcome = "executed" if order is not None else "skipped"
                reason = "; ".join(done.notes) or (f"order {order.status}" if order else "")
                order_id = order.id if order is not None else None
            _record(uow, running, bar_open, rule, intent, outcome, reason, order_id)
    except (PapertradeError, TradingRuleError) as exc:
        if isinstance(exc, PapertradeError) and exc.code == "portfolio_not_found":
            raise  # not a refusal: the deployment cannot go on
        async with ctx.transaction() as uow:
            _record(uow, running, bar_open, rule, intent, "refused", _message(exc), None)


def _message(exc: Exception) -> str:
    return str(getattr(exc, "message", None) or exc)[:500]


async def _position(session: AsyncSession, portfolio_id: int, symbol: str) -> Decimal:
    quantity = await session.scalar(
        select(Position.quantity).where(
            Position.portfolio_id == portfolio_id, Position.symbol == symbol
        )
    )
    return Decimal(0) if quantity is None else Decimal(quantity)


def _record(
    uow: AsyncWork,
    running: Running,
    bar_open: int,
    rule: str,
    intent: dict[str, Any],
    outcome: str,
    reason: str,
    order_id: int | None,
) -> None:
    signal = StrategySignal(
        strategy_id=running.strategy_id,
        deployment_id=running.deployment_id,
        version=running.version,
        time=uow.now(),
        bar_time=bar_open,
        rule=rule[:300],
        intent=intent,
        outcome=outcome,
        reason=reason[:500],
        order_id=order_id,
    )
    uow.session.add(signal)
    uow.emit(
        StrategySignalled(
            portfolio_id=running.portfolio_id,
            payload={
                "strategy_id": running.strategy_id,
                "deployment_id": running.deployment_id,
                "version": running.version,
                "bar_time": bar_open,
                "rule": signal.rule,
                "intent": intent,
                "outcome": outcome,
                "reason": signal.reason,
                "order_id": order_id,
            },
        )
    )


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
