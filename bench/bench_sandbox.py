"""The Python sandbox: start-up cost of a run and per-bar cost of a trivial strategy.

Each run is a fresh process (spawn, imports, limits, seccomp), so start-up is paid per backtest
and per live evaluation; the per-bar cost is a `next()` call with one indicator read.

    python bench/bench_sandbox.py [--bars 100000] [--runs 5]
"""

import argparse
import statistics
import time

from papertrade.strategies.sandbox.runner import run

TRIVIAL = """
class Strategy:
    def init(self, ctx):
        self.sma = ctx.indicator("sma", 10)

    def next(self, ctx):
        if self.sma[-1] > ctx.bar.close * 2:
            ctx.buy(size=0.1)
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bars", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    startup = timed(2, args.runs)
    full = timed(args.bars, args.runs)
    per_bar_us = (full - startup) / args.bars * 1e6
    print("| measure | median |")
    print("|---|---:|")
    print(f"| start-up of a run (2 bars) | {startup * 1000:.0f} ms |")
    print(f"| run over {args.bars:,} bars | {full:.2f} s |")
    print(f"| per bar (trivial next()) | {per_bar_us:.2f} µs |")


if __name__ == "__main__":
    main()
