"""What the read-only check after a downgrade costs the order path (docs/tiers.md): CPU per
MARKET order through the order writer (16 in flight, best of 7 rounds of 800, the same method as
bench_order_cpu.py) with TIERS_ENFORCED on (one query per group of orders: are the group's
portfolios over their owners' tiers?) and off, on SQLite and on PostgreSQL."""

import asyncio
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_order_cpu import IN_FLIGHT, PER_ROUND, PG_DEFAULT, ROUNDS, _measure, _settings
from server import machine

from tests.reliability.failover import fresh_database


async def main() -> None:
    rows = []
    for enforced in (False, True):
        with tempfile.TemporaryDirectory() as var:
            sqlite = _settings(f"sqlite+aiosqlite:///{var}/bench.db", Path(var))
            sqlite = sqlite.model_copy(update={"tiers_enforced": enforced})
            rows.append(("SQLite", enforced, await _measure(sqlite)))
            base = os.environ.get("PAPERTRADE_TEST_POSTGRES_URL", PG_DEFAULT)
            async with fresh_database(base, f"papertrade_bench_tier_{os.getpid()}") as url:
                pg = _settings(url, Path(var)).model_copy(update={"tiers_enforced": enforced})
                rows.append(("PostgreSQL", enforced, await _measure(pg)))
    print(f"Machine: {machine()}; {IN_FLIGHT} orders in flight, {ROUNDS} rounds of {PER_ROUND}\n")
    print("| database | TIERS_ENFORCED | CPU per order, best round | median round |")
    print("|---|---|---:|---:|")
    for database, enforced, figures in sorted(rows, key=lambda r: (r[0], r[1])):
        ordered = sorted(cpu for cpu, _background in figures)
        print(
            f"| {database} | {'on' if enforced else 'off'} | {ordered[0]:.0f} µs | "
            f"{ordered[len(ordered) // 2]:.0f} µs |"
        )


if __name__ == "__main__":
    asyncio.run(main())
