"""The Python sandbox: start-up cost of a run, per-bar cost of a trivial strategy, and a whole
Python backtest (sandbox, simulation, report) over 100,000 bars.

Each run is a fresh isolated process (namespaces, a fresh uid, imports, limits, seccomp) fed
one bar at a time, so start-up is paid per backtest and per live evaluation, and every bar is a
hand-over between the server and the process. Issue 29's target: the whole backtest within 1.5×
of the run before bar-by-bar isolation (0.99 s on a quiet machine, 2026-11-28).

    python bench/bench_sandbox.py [--bars 100000] [--runs 5]
"""

import argparse
import os
import statistics
import time
from decimal import Decimal

import numpy as np

from papertrade.strategies.backtest.simulate import Costs
from papertrade.strategies.bars import Bars
from papertrade.strategies.jobs import compute
from papertrade.strategies.sandbox.runner import run
from papertrade.trading.fees import FeeSchedule

BEFORE_S = 0.99  # the whole backtest over 100,000 bars before the change (quiet machine)
TRIVIAL = """
class Strategy:
    def init(self, ctx):
        self.sma = ctx.indicator("sma", 10)

    def next(self, ctx):
        if self.sma[-1] > ctx.bar.close * 2:
            ctx.buy(size=0.1)
"""
CROSSOVER = """
class Strategy:
    symbol = "BTCUSDT"

    def init(self, ctx):
        self.fast = ctx.indicator("sma", 10)
        self.slow = ctx.indicator("sma", 30)

    def next(self, ctx):
        if ctx.crossover(self.fast, self.slow):
            ctx.buy(size=0.5)
        elif ctx.crossover(self.slow, self.fast):
            ctx.close()
"""


def bars(count: int) -> dict[str, list[float]]:
    closes = [100.0 + (i % 50) for i in range(count)]
    return {
        "time": [float(i * 60_000) for i in range(count)],
        "open": closes,
        "high": closes,
        "low": closes,
        "close": closes,
        "volume": [1.0] * count,
    }


def timed(count: int, runs: int) -> float:
    data = bars(count)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        run(TRIVIAL, data, cpu_s=60, wall_s=300)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def backtest(count: int, runs: int) -> tuple[float, int]:
    rng = np.random.default_rng(1)
    close = 100 * np.exp(np.cumsum(rng.normal(0, 0.002, count)))
    walk = Bars(
        time=np.arange(count, dtype=np.int64) * 60_000 + 1_700_000_000_000,
        open=close,
        high=close * 1.001,
        low=close * 0.999,
        close=close,
        volume=np.ones(count),
    )
    costs = Costs(
        initial_balance=Decimal(10_000),
        fees=FeeSchedule(Decimal("0.0002"), Decimal("0.0005")),
        qty_step=Decimal("0.001"),
        min_qty=Decimal("0.001"),
    )
    samples, trades = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        result = compute("python", CROSSOVER, walk, costs, 60)
        samples.append(time.perf_counter() - started)
        trades = result["metrics"]["num_trades"]
    return statistics.median(samples), trades


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bars", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    startup = timed(2, args.runs)
    full = timed(args.bars, args.runs)
    per_bar_us = (full - startup) / args.bars * 1e6
    whole, trades = backtest(args.bars, args.runs)
    print(f"load average before the run: {load:.2f}")
    print("| measure | median |")
    print("|---|---:|")
    print(f"| start-up of a run (2 bars) | {startup * 1000:.0f} ms |")
    print(f"| run over {args.bars:,} bars | {full:.2f} s |")
    print(f"| per bar (trivial next(), hand-over included) | {per_bar_us:.2f} µs |")
    print(f"| whole Python backtest over {args.bars:,} bars ({trades} trades) | {whole:.2f} s |")
    if args.bars == 100_000:
        verdict = "met" if whole <= 1.5 * BEFORE_S else "NOT met"
        print(
            f"whole backtest {whole:.2f} s vs {BEFORE_S:.2f} s before: "
            f"{whole / BEFORE_S:.2f}× (target ≤ 1.5×, {verdict})"
        )


if __name__ == "__main__":
    main()
