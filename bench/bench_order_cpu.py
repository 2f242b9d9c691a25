"""Python CPU per MARKET order in the order path itself (no HTTP): the order writer's group commit
on SQLite and on PostgreSQL, 16 orders in flight, measured as this process's CPU time (every
thread: event loop, SQLite's writer thread, the drivers) per order, the best of several rounds.
Everything is on (the engine leader, every outbox consumer), and each round lasts until the
outbox consumers have handled its last event, so their work is in the figure. What the idle
process spends anyway in the same time (the engine's sweeps, the job scheduler: measured for
IDLE_S with nothing to do) is taken off, so that a loaded machine, where a round takes longer,
does not charge that background to the orders; it is printed beside. The orders go to
one portfolio, and on PostgreSQL also to 256 in turn (the load of bench_scaleout.py, where the
per-portfolio work of the consumers shows).

PostgreSQL's own work runs in its server processes and is not counted. The PostgreSQL database is
created on the server of PAPERTRADE_TEST_POSTGRES_URL (default
postgresql+asyncpg://postgres@127.0.0.1:5432/test) and dropped afterwards.
"""

import asyncio
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from decimal import Decimal
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inprocess import scheduled_runs_settled
from server import machine

from papertrade.app import create_app
from papertrade.auth.principal import Principal
from papertrade.config import Settings
from papertrade.models import OutboxCursor, OutboxEvent
from papertrade.orders.commands import PlaceOrder
from papertrade.trading.enums import OrderType, Side
from tests.conftest import sign_up
from tests.reliability.failover import fresh_database

PG_DEFAULT = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
IN_FLIGHT = 16
ROUNDS = 5
PER_ROUND = 800
IDLE_S = 4.0


def _settings(database_url: str, var_dir: Path) -> Settings:
    return Settings(
        database_url=database_url,
        var_dir=var_dir,
        secret_key="bench",
        public_base_url="https://testserver",
        market_source="sim",
        sim_tick_ms=60_000,
        # The sim ticks once a minute; on a loaded machine a round outlasts the 15 s default.
        stale_after_ms=3_600_000,
        rate_limit_signup_ip_per_hour=1000,
        tiers_enforced=False,  # 256 portfolios for one user
    )


async def _drained(app: Any) -> None:
    """Until every outbox consumer has handled every event so far (at once when there is none:
    bench_chain_cost.py's baseline)."""
    if not app.state.outbox.consumers:
        return
    deadline = asyncio.get_running_loop().time() + 300
    while True:
        async with app.state.ctx.db.reader() as session:
            last = await session.scalar(select(func.max(OutboxEvent.id))) or 0
            lowest = await session.scalar(select(func.min(OutboxCursor.last_id))) or 0
        if lowest >= last:
            return
        assert asyncio.get_running_loop().time() < deadline, "the outbox did not drain"
        await asyncio.sleep(0.02)


async def idle_rate(app: Any) -> float:
    """CPU seconds per second this process spends with no orders (everything drained)."""
    await _drained(app)
    loop = asyncio.get_running_loop()
    cpu, wall = time.process_time(), loop.time()
    await asyncio.sleep(IDLE_S)
    return (time.process_time() - cpu) / (loop.time() - wall)


async def timed(app: Any, rate: float, work: Any) -> tuple[float, float]:
    """(CPU seconds of `work` net of the idle background, that background's seconds)."""
    loop = asyncio.get_running_loop()
    cpu, wall = time.process_time(), loop.time()
    await work
    background = rate * (loop.time() - wall)
    return time.process_time() - cpu - background, background


@asynccontextmanager
async def placing(app: Any, portfolios: int) -> AsyncIterator[Callable[[int], Awaitable[None]]]:
    """In a running app: a user with `portfolios` portfolios, and `place(count)`, which places
    `count` MARKET orders to them in turn, IN_FLIGHT at a time, and returns once the outbox's
    consumers have handled their events (their work is part of an order). The scheduled jobs'
    first runs have finished: none is measured with the orders."""
    user = await sign_up(app)
    pids = [(await user.portfolio(initial_balance="100000000"))["id"] for _ in range(portfolios)]
    market = app.state.ctx.market
    await market.set_price("BTCUSDT", Decimal(60000))
    writer = getattr(app.state, "orders", None) or app.state.ctx.orders
    principal = Principal("session", user.profile["id"], 1)
    commands = itertools.cycle(
        [
            PlaceOrder(pid, "BTCUSDT", Side.BUY, OrderType.MARKET, quantity=Decimal("0.002"))
            for pid in pids
        ]
    )

    async def place(count: int) -> None:
        for _ in range(count // IN_FLIGHT):
            # A loaded machine may take longer than the staleness limit over a round.
            await market.set_price("BTCUSDT", Decimal(60000))
            await asyncio.gather(
                *(writer.place(principal, next(commands)) for _ in range(IN_FLIGHT))
            )
        await _drained(app)

    await scheduled_runs_settled(app)
    try:
        yield place
    finally:
        await user.client.aclose()


async def _measure(settings: Settings, portfolios: int = 1) -> list[tuple[float, float]]:
    """(µs of CPU per order, µs of idle background taken off per order), one pair per round."""
    app = create_app(settings)
    async with app.router.lifespan_context(app), placing(app, portfolios) as place:
        await place(400)  # warm-up: caches, pools, the writer's memory
        rate = await idle_rate(app)
        figures = []
        for _ in range(ROUNDS):
            net, background = await timed(app, rate, place(PER_ROUND))
            figures.append((net / PER_ROUND * 1e6, background / PER_ROUND * 1e6))
    return figures


async def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as var:
        sqlite = _settings(f"sqlite+aiosqlite:///{var}/bench.db", Path(var))
        rows.append(("SQLite, 1 portfolio", await _measure(sqlite)))
        base = os.environ.get("PAPERTRADE_TEST_POSTGRES_URL", PG_DEFAULT)
        async with fresh_database(base, f"papertrade_bench_cpu_{os.getpid()}") as url:
            rows.append(("PostgreSQL, 1 portfolio", await _measure(_settings(url, Path(var)))))
        async with fresh_database(base, f"papertrade_bench_cpu_{os.getpid()}_256") as url:
            settings = _settings(url, Path(var))
            rows.append(("PostgreSQL, 256 portfolios", await _measure(settings, 256)))
    print(f"Machine: {machine()}; {IN_FLIGHT} orders in flight, {ROUNDS} rounds of {PER_ROUND}\n")
    print("| database | CPU per order, best round | median round | idle background taken off |")
    print("|---|---:|---:|---:|")
    for database, figures in rows:
        ordered = sorted(figures)
        best, median = ordered[0][0], ordered[len(ordered) // 2][0]
        background = statistics.median(b for _, b in figures)
        print(f"| {database} | {best:.0f} µs | {median:.0f} µs | {background:.0f} µs |")
    for database, figures in rows:
        if database.startswith("PostgreSQL"):
            median = sorted(figures)[len(figures) // 2][0]
            print(
                f"\nPython per order in process, {database}: {median:.0f} µs (median round); "
                "target ≤ 500 µs (issue 32; over HTTP: bench_order_http_cpu.py)"
            )


if __name__ == "__main__":
    asyncio.run(main())
