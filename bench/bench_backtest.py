"""Self-backtest speed: SMA(10)/SMA(30) crossover on 1,000,000 one-minute bars, ours against
backtesting.py (PyPI `backtesting`, a dev/bench dependency) on the same data in the same run.

Both: always in the market after the first cross (a cross up closes any short and goes long, a
cross down the reverse), 95 % of equity per entry, fills at the next bar's open, 0.05 % fee
per fill. backtesting.py sizes a fractional `size` in whole units, so ours is given a lot step
of 1 too; the prices are a seeded random walk around 30,000.

    python bench/bench_backtest.py [--bars 1000000]
"""

import argparse
import time
import warnings
from decimal import Decimal
from typing import Any

import numpy as np

from papertrade.strategies.backtest import report
from papertrade.strategies.backtest.simulate import Costs, simulate
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl.parse import parse
from papertrade.trading.fees import FeeSchedule

FEE = Decimal("0.0005")
CASH = 10_000_000
SOURCE = """
when sma(10) crosses above sma(30) then buy 95%
when sma(10) crosses below sma(30) then sell 95%
"""


def make_bars(count: int) -> Bars:
    rng = np.random.default_rng(2026)
    closes = np.round(30_000 * np.exp(np.cumsum(rng.normal(0, 0.0008, count))), 1)
    opens = np.concatenate(([closes[0]], closes[:-1]))
    wiggle = np.round(np.abs(rng.normal(0, 8, count)), 1)
    return Bars(
        time=1_700_000_000_000 + np.arange(count, dtype=np.int64) * 60_000,
        open=opens,
        high=np.maximum(opens, closes) + wiggle,
        low=np.minimum(opens, closes) - wiggle,
        close=closes,
        volume=np.ones(count),
    )


def ours(bars: Bars) -> tuple[float, int, float]:
    started = time.perf_counter()
    costs = Costs(Decimal(CASH), FeeSchedule(FEE, FEE), qty_step=Decimal(1), min_qty=Decimal(1))
    outcome = simulate(parse(SOURCE), bars, costs)
    result = report.build(outcome, bars, costs)
    elapsed = time.perf_counter() - started
    return elapsed, int(result["metrics"]["num_trades"]), float(result["final_equity"])


def theirs(bars: Bars) -> tuple[float, int, float]:
    # untyped libraries, imported here so the rest of the script stands without them
    import pandas as pd  # type: ignore[import-untyped]
    from backtesting import Backtest, Strategy  # type: ignore[import-untyped]
    from backtesting.lib import crossover  # type: ignore[import-untyped]

    frame = pd.DataFrame(
        {
            "Open": bars.open,
            "High": bars.high,
            "Low": bars.low,
            "Close": bars.close,
            "Volume": bars.volume,
        },
        index=pd.to_datetime(bars.time, unit="ms"),
    )

    def sma(values: Any, n: int) -> Any:
        return pd.Series(values).rolling(n).mean()

    class SmaCross(Strategy):  # type: ignore[misc]
        def init(self) -> None:
            self.fast = self.I(sma, self.data.Close, 10)
            self.slow = self.I(sma, self.data.Close, 30)

        def next(self) -> None:
            if crossover(self.fast, self.slow):
                self.position.close()
                self.buy(size=0.95)
            elif crossover(self.slow, self.fast):
                self.position.close()
                self.sell(size=0.95)

    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        backtest = Backtest(frame, SmaCross, cash=CASH, commission=float(FEE), finalize_trades=True)
        stats = backtest.run()
    elapsed = time.perf_counter() - started
    return elapsed, int(stats["# Trades"]), float(stats["Equity Final [$]"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bars", type=int, default=1_000_000)
    args = parser.parse_args()
    bars = make_bars(args.bars)
    our_time, our_trades, our_equity = ours(bars)
    their_time, their_trades, their_equity = theirs(bars)
    print(f"SMA(10)/SMA(30) crossover, {args.bars:,} one-minute bars\n")
    print("| engine | seconds | trades | final equity |")
    print("|---|---:|---:|---:|")
    print(f"| papertrade (DSL, vectorised) | {our_time:.2f} | {our_trades:,} | {our_equity:,.2f} |")
    print(f"| backtesting.py 0.6.6 | {their_time:.2f} | {their_trades:,} | {their_equity:,.2f} |")
    print(f"\nspeed-up: {their_time / our_time:.1f}× (target ≥ 10×)")


if __name__ == "__main__":
    main()
