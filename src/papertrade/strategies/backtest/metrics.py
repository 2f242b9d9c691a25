"""The self-backtest's metric keys (domain rules B5), the same for every strategy kind."""

import math
from decimal import Decimal

import numpy as np
from numpy.typing import NDArray

from papertrade.strategies.backtest.simulate import Outcome
from papertrade.strategies.bars import Bars

DAY_MS = 86_400_000
PERIODS_PER_YEAR = 365  # crypto trades every day


def _finite(value: float) -> float | None:
    """JSON has no NaN or infinity: an undefined ratio is null."""
    return value if math.isfinite(value) else None


def daily_returns(times: NDArray[np.int64], equity: NDArray[np.float64]) -> NDArray[np.float64]:
    """Returns between the equity at the last bar of each UTC day."""
    if len(times) == 0:
        return np.array([])
    days = times // DAY_MS
    last_of_day = np.flatnonzero(np.diff(days, append=days[-1] + 1))
    closes = equity[last_of_day]
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(np.diff(closes) / closes[:-1], dtype=np.float64)


def drawdown(equity: NDArray[np.float64]) -> NDArray[np.float64]:
    """1 − equity / running peak, per bar (0 at a new high)."""
    peak = np.maximum.accumulate(equity)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(1.0 - equity / peak, dtype=np.float64)


def _longest_drawdown_ms(times: NDArray[np.int64], down: NDArray[np.float64]) -> int:
    """The longest time spent below a previous peak."""
    underwater = down > 0
    if not underwater.any():
        return 0
    edges = np.diff(np.concatenate(([0], underwater.astype(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    last = len(times) - 1
    return int(
        max(
            int(times[min(int(e), last)]) - int(times[max(int(s) - 1, 0)])
            for s, e in zip(starts, ends, strict=True)
        )
    )


def compute(outcome: Outcome, bars: Bars, initial: Decimal) -> dict[str, float | int | None]:
    equity, times = outcome.equity, bars.time
    start = float(initial)
    end = float(outcome.final_equity)
    down = drawdown(equity) if len(equity) else np.array([0.0])
    returns = daily_returns(times, equity)
    days = max((int(times[-1]) - int(times[0])) / DAY_MS, 1e-9) if len(times) > 1 else 0.0
    total = (end - start) / start
    annual = (end / start) ** (365 / days) - 1 if days and end > 0 else float("nan")
    max_dd = float(down.max()) if len(down) else 0.0
    sharpe = sortino = float("nan")
    if len(returns) > 1:
        sharpe = returns.mean() / returns.std(ddof=1) * math.sqrt(PERIODS_PER_YEAR)
        downside = math.sqrt(float(np.mean(np.minimum(returns, 0) ** 2)))
        sortino = returns.mean() / downside * math.sqrt(PERIODS_PER_YEAR)
    closed = [t for t in outcome.trades if t.exit_time is not None]
    # A trade's net PnL: realized, less both fills' fees and the funding paid while open.
    # Wins, losses, win rate, profit factor and expectancy are all on it: a trade that gained
    # less than its fees is a loss.
    pnls = np.array([float(t.pnl) for t in closed])
    pcts = np.array([float(t.pnl / (t.qty * t.entry_price)) * 100 for t in closed])
    wins, losses = pnls[pnls > 0], pnls[pnls < 0]
    win_rate = len(wins) / len(pnls) if len(pnls) else float("nan")
    holding = [t.exit_time - t.entry_time for t in closed if t.exit_time is not None]
    first_close, last_close = float(bars.close[0]), float(bars.close[-1])
    return {
        "total_return_pct": _finite(total * 100),
        "annual_return_pct": _finite(annual * 100),
        "max_drawdown_pct": _finite(max_dd * 100),
        "max_drawdown_duration": _longest_drawdown_ms(times, down) if len(times) else 0,
        "sharpe": _finite(float(sharpe)),
        "sortino": _finite(float(sortino)),
        "calmar": _finite(annual / max_dd) if max_dd > 0 else None,
        "win_rate_pct": _finite(win_rate * 100),
        "profit_factor": _finite(float(wins.sum() / -losses.sum())) if len(losses) else None,
        "num_trades": len(closed),
        "avg_trade_pct": _finite(float(pcts.mean())) if len(pcts) else None,
        "best_trade_pct": _finite(float(pcts.max())) if len(pcts) else None,
        "worst_trade_pct": _finite(float(pcts.min())) if len(pcts) else None,
        "avg_holding_time": int(np.mean(holding)) if holding else None,
        "exposure_pct": _finite(float(outcome.exposure.mean()) * 100) if len(equity) else 0.0,
        "expectancy": _finite(
            win_rate * (wins.mean() if len(wins) else 0.0)
            - len(losses) / len(pnls) * (-losses.mean() if len(losses) else 0.0)
        )
        if len(pnls)
        else None,
        "buy_hold_return_pct": _finite((last_close / first_close - 1) * 100),
        "final_equity": _finite(end),
        "fees_paid": _finite(float(outcome.fees_paid)),
        "funding_paid": _finite(float(outcome.funding_paid)),
    }
