"""Order throughput on PostgreSQL with one and with two API processes (issue 7, point 7).

For each process count: a fresh PostgreSQL database, Redis, `papertrade serve --workers N`;
MARKET orders through `POST /v1/order` and signed ones through `POST /fapi/v1/order`, each beside
the same run's cheap GET (`/v1/market/status`, `/fapi/v1/ping`). On this 2-core machine the
server processes, PostgreSQL and wrk share both cores (nothing is pinned), so a second process
can only add what the first leaves idle; the 2-vs-1 ratio is the figure to watch.

Run: .venv/bin/python bench/bench_scaleout.py [postgresql+asyncpg://postgres@127.0.0.1:5432/test]
"""

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

import asyncpg
from bench_fapi import LUA, make_key, presign
from server import machine, served, signup_with_key, wrk

PG = sys.argv[1] if len(sys.argv) > 1 else "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
REDIS = "redis://127.0.0.1:6379/14"
ALL_CORES = "0,1"
SECONDS = 10
ORDER_LUA = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %(key)s"
wrk.body = '%(body)s'
"""


async def fresh_database(name: str) -> str:
    conn = await asyncpg.connect(PG.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return PG.rsplit("/", 1)[0] + f"/{name}"


def measure(workers: int, tmp: Path) -> list[tuple[str, dict[str, float], dict[str, float]]]:
    url = asyncio.run(fresh_database(f"papertrade_bench_{workers}"))
    env = {"PAPERTRADE_DATABASE_URL": url, "PAPERTRADE_REDIS_URL": REDIS}
    with served(env, workers=workers, cores=ALL_CORES) as base:
        time.sleep(2)  # every worker up (the health check reaches only one)
        key, pid, _client = signup_with_key(base)
        body = {"portfolio_id": pid, "symbol": "BTCUSDT", "side": "buy", "type": "market"}
        native = tmp / f"native{workers}.lua"
        native.write_text(
            ORDER_LUA % {"key": key, "body": json.dumps(body | {"quantity": "0.002"})}
        )
        api_key, api_secret = asyncio.run(make_key(base))
        lines = tmp / f"fapi{workers}.txt"
        lines.write_text("\n".join(presign(api_secret, 8000 * SECONDS)) + "\n")
        compat = tmp / f"fapi{workers}.lua"
        compat.write_text(LUA.replace("API_KEY", api_key))
        run = {"seconds": SECONDS, "cores": ALL_CORES}
        wrk(base + "/v1/order", native, seconds=3, cores=ALL_CORES)  # warm-up
        return [
            (
                "/v1",
                wrk(base + "/v1/order", native, **run),  # type: ignore[arg-type]
                wrk(base + "/v1/market/status", None, **run),  # type: ignore[arg-type]
            ),
            (
                "/fapi",
                wrk(base, compat, args=(str(lines), "1"), **run),  # type: ignore[arg-type]
                wrk(base + "/fapi/v1/ping", None, **run),  # type: ignore[arg-type]
            ),
        ]


def main() -> None:
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            results[workers] = measure(workers, Path(tmp))
    print(f"Machine: {machine()}; PostgreSQL 15 and Redis on the same machine")
    print(f"wrk -t1 -c32 -d{SECONDS}s; nothing pinned\n")
    print(
        "| processes | orders via | orders/s | p50 ms | p99 ms | non-2xx | ping/s | orders/ping |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for workers, rows in results.items():
        for surface, orders, ping in rows:
            print(
                f"| {workers} | {surface} | {orders['rps']:,.0f} | {orders['p50']:.1f} | "
                f"{orders['p99']:.1f} | {orders['non2xx']:.0f} | {ping['rps']:,.0f} | "
                f"{orders['rps'] / ping['rps']:.2f} |"
            )
    for index, surface in enumerate(("/v1", "/fapi")):
        one, two = results[1][index][1]["rps"], results[2][index][1]["rps"]
        print(f"\n{surface}: 2 processes / 1 process = {two / one:.2f} (target ≥ 1.6)")


if __name__ == "__main__":
    main()
