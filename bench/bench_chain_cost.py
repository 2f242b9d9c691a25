"""What the outbox's consumers, and the chain among them, add to the order path: CPU per MARKET
order (this process, every thread), 16 orders in flight, on SQLite and on PostgreSQL (one
portfolio, and 256 in turn), in three setups run alternately:

- no consumer at all: the orders write their events and nobody reads them (the baseline);
- every consumer but the chain's;
- every consumer (the service as it runs).

Each round lasts until the consumers have handled its last event, so their CPU is in the figure.
Best and median round of each, net of the idle process's background (bench_order_cpu.py).
Targets (issue 32): delivery to all consumers adds at most 30 % to an order, the chain at most
10 %. PostgreSQL's own work runs in its server processes and is not counted.
"""

import asyncio
import os
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_order_cpu import IN_FLIGHT, PG_DEFAULT, _settings, idle_rate, placing, timed
from server import load_average, machine

from papertrade.app import create_app
from papertrade.chain.consumers import CHAIN
from papertrade.config import Settings
from papertrade.outbox.catalogue import CONSUMERS
from papertrade.outbox.dispatcher import Consumer
from tests.reliability.failover import fresh_database

ROUNDS = 5
PER_ROUND = 480
NONE = "no consumer (the orders alone)"
BUT_CHAIN = "every consumer but the chain"
EVERY = "every consumer (the service as it runs)"


async def _measure(
    settings: Settings, consumers: Sequence[Consumer] | None, portfolios: int
) -> list[float]:
    """µs of CPU per order, one figure per round; `consumers` None: none at all, not even
    those the app builds with its context (inbox, copy trading, waitlist)."""
    app = create_app(settings, consumers=consumers or CONSUMERS)
    if consumers is None:
        app.state.outbox.consumers = ()
    async with app.router.lifespan_context(app), placing(app, portfolios) as place:
        await place(320)  # warm-up: caches, pools, the writer's memory
        rate = await idle_rate(app)
        figures = []
        for _ in range(ROUNDS):
            net, _background = await timed(app, rate, place(PER_ROUND))
            figures.append(net / PER_ROUND * 1e6)
    return figures


def _share(figures: dict[str, list[float]], over: str, base: str) -> str:
    best = 100 * (min(figures[over]) / min(figures[base]) - 1)
    median = 100 * (statistics.median(figures[over]) / statistics.median(figures[base]) - 1)
    return f"{best:+.0f} % / {median:+.0f} %"


async def main() -> None:
    setups: dict[str, Sequence[Consumer] | None] = {
        NONE: None,
        BUT_CHAIN: tuple(c for c in CONSUMERS if c.name != CHAIN.name),
        EVERY: CONSUMERS,
    }
    base = os.environ.get("PAPERTRADE_TEST_POSTGRES_URL", PG_DEFAULT)
    load = load_average()
    results: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        var = Path(tmp)
        for database, portfolios in (("SQLite", 1), ("PostgreSQL", 1), ("PostgreSQL", 256)):
            where = f"{database}, {portfolios} portfolio{'s' if portfolios > 1 else ''}"
            figures: dict[str, list[float]] = {name: [] for name in setups}
            for run in range(2):
                for index, (name, consumers) in enumerate(setups.items()):
                    label = f"{database[0].lower()}{portfolios}_{index}_{run}_{os.getpid()}"
                    if database == "SQLite":
                        settings = _settings(f"sqlite+aiosqlite:///{var}/{label}.db", var)
                        figures[name] += await _measure(settings, consumers, portfolios)
                        continue
                    async with fresh_database(base, f"papertrade_bench_chain_{label}") as url:
                        settings = _settings(url, var)
                        figures[name] += await _measure(settings, consumers, portfolios)
            results[where] = figures
    print(f"Machine: {machine()}; load average before the run {load}")
    print(f"{IN_FLIGHT} in flight, 2 × {ROUNDS} rounds of {PER_ROUND} orders per setup; CPU time\n")
    print("| database | outbox consumers | CPU per order, best | median |")
    print("|---|---|---:|---:|")
    for where, figures in results.items():
        for name, values in figures.items():
            print(
                f"| {where} | {name} | {min(values):.0f} µs | {statistics.median(values):.0f} µs |"
            )
    print("\n| database | delivery to all consumers adds (≤ 30 %) | the chain adds (≤ 10 %) |")
    print("|---|---:|---:|")
    for where, figures in results.items():
        print(f"| {where} | {_share(figures, EVERY, NONE)} | {_share(figures, EVERY, BUT_CHAIN)} |")
    print("\n(best rounds / medians; the chain's share is over every other consumer)")


if __name__ == "__main__":
    asyncio.run(main())
