"""Python CPU per MARKET order in the order path itself (no HTTP): the order writer's group commit
on SQLite and on PostgreSQL, 16 orders in flight, measured as this process's CPU time (every
thread: event loop, SQLite's writer thread, the drivers) per order, the best of several rounds.

PostgreSQL's own work runs in its server processes and is not counted. The PostgreSQL database is
created on the server of PAPERTRADE_TEST_POSTGRES_URL (default
postgresql+asyncpg://postgres@127.0.0.1:5432/test) and dropped afterwards.
"""

import asyncio
import os
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from server import machine

from papertrade.app import create_app
from papertrade.auth.principal import Principal
from papertrade.config import Settings
from papertrade.orders.commands import PlaceOrder
from papertrade.trading.enums import OrderType, Side
from tests.conftest import sign_up
from tests.reliability.failover import fresh_database

PG_DEFAULT = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
IN_FLIGHT = 16
ROUNDS = 7
PER_ROUND = 800


def _settings(database_url: str, var_dir: Path) -> Settings:
    return Settings(
        database_url=database_url,
        var_dir=var_dir,
        secret_key="bench",
        public_base_url="https://testserver",
        market_source="sim",
        sim_tick_ms=60_000,
        rate_limit_signup_ip_per_hour=1000,
    )


async def _measure(settings: Settings) -> list[float]:
    """µs of CPU per order, one figure per round."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        user = await sign_up(app)
        pid = (await user.portfolio(initial_balance="100000000"))["id"]
        await app.state.ctx.market.set_price("BTCUSDT", Decimal(60000))
        state: Any = app.state
        writer = getattr(state, "orders", None) or state.ctx.orders
        principal = Principal("session", user.profile["id"], 1)
        command = PlaceOrder(pid, "BTCUSDT", Side.BUY, OrderType.MARKET, quantity=Decimal("0.002"))

        async def place(count: int) -> None:
            for _ in range(count // IN_FLIGHT):
                await asyncio.gather(*(writer.place(principal, command) for _ in range(IN_FLIGHT)))

        await place(400)  # warm-up: caches, pools, the writer's memory
        figures = []
        for _ in range(ROUNDS):
            started = time.process_time()
            await place(PER_ROUND)
            figures.append((time.process_time() - started) / PER_ROUND * 1e6)
        await user.client.aclose()
    return figures


async def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as var:
        sqlite = _settings(f"sqlite+aiosqlite:///{var}/bench.db", Path(var))
        rows.append(("SQLite", await _measure(sqlite)))
        base = os.environ.get("PAPERTRADE_TEST_POSTGRES_URL", PG_DEFAULT)
        async with fresh_database(base, f"papertrade_bench_cpu_{os.getpid()}") as url:
            rows.append(("PostgreSQL", await _measure(_settings(url, Path(var)))))
    print(f"Machine: {machine()}; {IN_FLIGHT} orders in flight, {ROUNDS} rounds of {PER_ROUND}\n")
    print("| database | CPU per order, best round | median round |")
    print("|---|---:|---:|")
    for database, figures in rows:
        ordered = sorted(figures)
        print(f"| {database} | {ordered[0]:.0f} µs | {ordered[len(ordered) // 2]:.0f} µs |")


if __name__ == "__main__":
    asyncio.run(main())
