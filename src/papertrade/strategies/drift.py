"""The drift report: backtest a deployed version over the period it ran live and set, bar by
bar, what the backtest did beside what the live portfolio did, with the differences explained.

The backtest starts early enough for the indicators to warm up but trades only from the first
bar the deployment evaluated, flat, with the portfolio's fee rates. A live fill is matched to
the backtest fill decided on the same closed bar: the backtest fills at the next bar's open,
live at the market when the evaluation ran, so their difference is the slippage and the time
after the bar's close is the latency; a signal refused live, or a bar only one side traded on,
says why.
"""

from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.kit.decimals import USDT_PLACES
from papertrade.market.feed import INTERVALS_MS
from papertrade.models import (
    Fill,
    Portfolio,
    Strategy,
    StrategyBacktest,
    StrategyDeployment,
    StrategySignal,
    StrategyVersion,
)
from papertrade.strategies.dsl.evaluate import warm_up_bars
from papertrade.strategies.errors import NotRunnable
from papertrade.strategies.live import PYTHON_BARS, program_of


def plan(
    strategy: Strategy,
    version: StrategyVersion,
    deployment: StrategyDeployment,
    portfolio: Portfolio,
    first_bar: int | None,
) -> StrategyBacktest:
    """The backtest that replays the deployment's live period (its first to last evaluated bar)."""
    if deployment.last_bar_ms is None or first_bar is None:
        raise NotRunnable("The deployment has not evaluated a bar yet: nothing to compare.")
    step = INTERVALS_MS[deployment.timeframe]
    program = program_of(strategy.kind, version.source)
    warm = PYTHON_BARS if strategy.kind == "python" else warm_up_bars(program)
    return StrategyBacktest(
        strategy_id=strategy.id,
        version=deployment.version,
        deployment_id=deployment.id,
        symbol=deployment.symbol,
        timeframe=deployment.timeframe,
        start_ms=first_bar - warm * step,
        # one bar past the last evaluated one: its signal fills at that bar's open
        end_ms=deployment.last_bar_ms + 2 * step,
        initial_balance=portfolio.initial_balance,
        maker_fee_rate=portfolio.maker_fee_rate,
        taker_fee_rate=portfolio.taker_fee_rate,
        status="queued",
    )


async def first_bar(session: AsyncSession, deployment_id: int) -> int | None:
    return await session.scalar(
        select(StrategySignal.bar_time)
        .where(StrategySignal.deployment_id == deployment_id)
        .order_by(StrategySignal.bar_time)
        .limit(1)
    )


def _money(value: Decimal) -> str:
    return str(value.quantize(USDT_PLACES))


async def compare(
    session: AsyncSession, deployment: StrategyDeployment, result: dict[str, Any]
) -> dict[str, Any]:
    step = INTERVALS_MS[deployment.timeframe]
    last_bar = deployment.last_bar_ms or 0
    signals = list(
        await session.scalars(
            select(StrategySignal)
            .where(StrategySignal.deployment_id == deployment.id)
            .order_by(StrategySignal.id)
        )
    )
    order_ids = [s.order_id for s in signals if s.order_id is not None]
    fills = (
        list(await session.scalars(select(Fill).where(Fill.order_id.in_(order_ids))))
        if order_ids
        else []
    )
    by_order: dict[int, list[Fill]] = {}
    for fill in fills:
        by_order.setdefault(fill.order_id, []).append(fill)
    backtest: dict[int, list[dict[str, Any]]] = {}
    for trade in result["trades"]:
        for fill in trade["fills"]:
            decided = int(fill["time"]) - step
            if decided <= last_bar:
                backtest.setdefault(decided, []).append(fill)
    live: dict[int, list[StrategySignal]] = {}
    for signal in signals:
        live.setdefault(signal.bar_time, []).append(signal)
    rows = []
    slippages: list[Decimal] = []
    latencies: list[int] = []
    for bar in sorted(set(backtest) | set(live)):
        row = _row(bar, step, backtest.get(bar, []), live.get(bar, []), by_order)
        slippages += [Decimal(s) for s in row.pop("_slippages")]
        latencies += row.pop("_latencies")
        rows.append(row)
    live_pnl = sum((f.realized_pnl - f.commission for f in fills), Decimal(0))
    initial = Decimal(str(result["assumptions"].get("initial_balance", "0")))
    backtest_pnl = Decimal(result["final_equity"]) - initial if initial else None
    return {
        "live_from": min(live) if live else None,
        "live_to": last_bar,
        "bars": rows[-1000:],
        "summary": {
            "backtest_fills": sum(len(v) for v in backtest.values()),
            "live_fills": len(fills),
            "live_refused": sum(1 for s in signals if s.outcome == "refused"),
            "avg_slippage": _money(sum(slippages, Decimal(0)) / len(slippages))
            if slippages
            else None,
            "avg_latency_ms": int(sum(latencies) / len(latencies)) if latencies else None,
            "live_realized_pnl": _money(live_pnl),
            "backtest_pnl": None if backtest_pnl is None else _money(backtest_pnl),
        },
        "notes": [
            "Live fills at the market when the evaluation ran, after the bar closed; the "
            "backtest at the next bar's open: their difference is slippage, the delay latency.",
            "The backtest starts flat at the first live bar; a position the portfolio held "
            "before, or other orders in it, are not in the backtest.",
            "Live realized PnL counts closed parts only (after fees); the backtest's PnL is "
            "marked to the last bar's close.",
        ],
    }


def _row(
    bar: int,
    step: int,
    planned: list[dict[str, Any]],
    signals: list[StrategySignal],
    by_order: dict[int, list[Fill]],
) -> dict[str, Any]:
    live_fills = [
        f for s in signals if s.order_id is not None for f in by_order.get(s.order_id, [])
    ]
    slippages: list[str] = []
    latencies: list[int] = []
    for mine, theirs in zip(planned, live_fills, strict=False):
        # positive: live paid more (a buy) or got less (a sell) than the backtest
        direction = 1 if Decimal(mine["qty"]) > 0 else -1
        slippages.append(str((theirs.price - Decimal(mine["price"])) * direction))
        latencies.append(theirs.created_at - (bar + step))
    refused = [s.reason for s in signals if s.outcome == "refused"]
    if planned and live_fills:
        why = "both traded: the difference is latency and slippage"
    elif planned and refused:
        why = f"refused live: {refused[0]}"
    elif planned and signals:
        why = f"live did nothing: {signals[0].reason or signals[0].outcome}"
    elif planned:
        why = "live did not evaluate this bar (paused, stopped or down)"
    elif live_fills:
        why = "live only: the backtest's position differed (an earlier refusal or fill)"
    else:
        why = signals[0].reason if signals else ""
    return {
        "bar_time": bar,
        "backtest": [
            {"time": f["time"], "price": f["price"], "qty": f["qty"], "reason": f["reason"]}
            for f in planned
        ],
        "live": [
            {
                "outcome": s.outcome,
                "reason": s.reason,
                "order_id": s.order_id,
                "rule": s.rule,
            }
            for s in signals
        ],
        "live_fills": [
            {"time": f.created_at, "price": str(f.price), "qty": str(f.quantity), "side": f.side}
            for f in live_fills
        ],
        "slippage": slippages,
        "latency_ms": latencies,
        "explanation": why,
        "_slippages": slippages,
        "_latencies": latencies,
    }
