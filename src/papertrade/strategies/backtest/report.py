"""A backtest's result as stored and served: metrics, curves, trades with fills, assumptions."""

from decimal import Decimal
from typing import Any

import numpy as np

from papertrade.kit.decimals import USDT_PLACES
from papertrade.strategies.backtest import metrics
from papertrade.strategies.backtest.simulate import ASSUMPTIONS, Costs, Outcome, Trade
from papertrade.strategies.bars import Bars

MAX_CURVE_POINTS = 2000  # curves are thinned to this many points (the extremes are kept)
MAX_TRADES = 5000  # the newest trades are kept beyond this; num_trades counts them all


def _money(value: Decimal) -> str:
    return str(value.quantize(USDT_PLACES))


def _curve_points(length: int, values: np.ndarray[Any, Any]) -> list[int]:
    """Indexes to keep: an even spread plus each bucket's lowest and highest point."""
    if length <= MAX_CURVE_POINTS:
        return list(range(length))
    buckets = np.array_split(np.arange(length), MAX_CURVE_POINTS // 3)
    keep: set[int] = {0, length - 1}
    for bucket in buckets:
        part = values[bucket]
        keep.update((int(bucket[0]), int(bucket[np.argmin(part)]), int(bucket[np.argmax(part)])))
    return sorted(keep)


def _trade(trade: Trade) -> dict[str, Any]:
    return {
        "side": trade.side,
        "qty": str(trade.qty),
        "entry_time": trade.entry_time,
        "entry_price": str(trade.entry_price),
        "exit_time": trade.exit_time,
        "exit_price": None if trade.exit_price is None else str(trade.exit_price),
        "pnl": _money(trade.pnl),
        "pnl_pct": float(trade.pnl / (trade.qty * trade.entry_price) * 100),
        "fills": [
            {
                "time": f.time,
                "price": str(f.price),
                "qty": str(f.qty),
                "fee": _money(f.fee),
                "reason": f.reason,
            }
            for f in trade.fills
        ],
    }


def build(outcome: Outcome, bars: Bars, costs: Costs) -> dict[str, Any]:
    equity = outcome.equity
    down = metrics.drawdown(equity) * 100
    points = _curve_points(len(equity), equity)
    trades = outcome.trades[-MAX_TRADES:]
    return {
        "metrics": metrics.compute(outcome, bars, costs.initial_balance),
        "equity_curve": [[int(bars.time[i]), round(float(equity[i]), 6)] for i in points],
        "drawdown_curve": [[int(bars.time[i]), round(float(down[i]), 4)] for i in points],
        "trades": [_trade(t) for t in trades],
        "trades_omitted": len(outcome.trades) - len(trades),
        "refusals": [
            {"time": r.time, "rule": r.rule, "reason": r.reason} for r in outcome.refusals[:1000]
        ],
        "bars": len(bars),
        "final_equity": _money(outcome.final_equity),
        "fees_paid": _money(outcome.fees_paid),
        "funding_paid": _money(outcome.funding_paid),
        "assumptions": {
            **ASSUMPTIONS,
            "initial_balance": str(costs.initial_balance),
            "taker_fee_rate": str(costs.fees.taker_rate),
            "maker_fee_rate": str(costs.fees.maker_rate),
            "funding_events": len(costs.funding),
        },
    }
