"""CPU and SQL statements per request, by kind of request (issue 32, point 1): what a ping, an
anonymous read, an authenticated `/v1` read and a signed `/fapi` read cost the process serving
them, so an authenticated read can be compared with the framework's own floor.

The real app (every background part on: simulated market, engine leader, outbox consumers) runs
in this process and is called straight through ASGI, one request at a time, with no HTTP client
or server in between (their cost is the same for every kind and is not the app's): each request
is a prepared scope, a one-message receive and a send that keeps the status. Measured per kind
over N requests (N ≥ 2000, the best of ROUNDS rounds):

- CPU: time.process_time() (every thread of the process: the event loop, SQLite's threads, the
  drivers), net of what the idle process spends anyway in the same wall time (the market's ticks,
  the engine's sweeps: measured for IDLE_S before), so a loaded machine, where a round takes
  longer, does not charge that background to the requests. CPU time, not wall time: the machine
  may be shared, but note the load average printed with the figures.
- SQL statements: SQLAlchemy's before_cursor_execute on every engine, net of the idle rate.

The kinds: `GET /fapi/v1/ping`; `GET /v1/market/status` without credentials;
`GET /v1/portfolios/{id}` with a native API key (Bearer); a signed `GET /fapi/v2/account` with the
portfolio's compat key (each request signed beforehand with its own timestamp). Rate limits are
on (the budgets large enough for the run), so each authenticated request is charged as in
production. On SQLite (no Redis) and on PostgreSQL + Redis.

Run: .venv/bin/python bench/bench_reads_cpu.py [--requests 2000] [--rounds 3] [--sqlite-only]
     [--profile KIND] (cProfile of that kind's requests on PostgreSQL + Redis, or on SQLite with
     --sqlite-only, timed in CPU time, the top
     functions printed and the whole profile saved as reads.prof in the system's temporary
     directory, for pstats)
Target: at most 400 µs per authenticated read (/v1 and /fapi), on both databases.
"""

import argparse
import asyncio
import cProfile
import hashlib
import hmac
import os
import pstats
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from sqlalchemy import Engine, event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from inprocess import scheduled_runs_settled
from server import load_average, machine

from papertrade.app import create_app
from papertrade.config import Settings
from tests.conftest import ORIGIN, sign_up
from tests.reliability.failover import fresh_database

PG_DEFAULT = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
REDIS_DEFAULT = "redis://127.0.0.1:6379/14"
IDLE_S = 3.0
TARGET_US = 400.0
BUDGET = 100_000_000  # rate limits apply, but no run spends them
KINDS = ("ping", "market status (anonymous)", "/v1 portfolio (API key)", "/fapi account (signed)")


class Statements:
    """Counts every SQL statement any engine of this process sends."""

    def __init__(self) -> None:
        self.count = 0
        event.listen(Engine, "before_cursor_execute", self._seen)

    def _seen(self, *_: Any) -> None:
        self.count += 1


def _settings(database_url: str, var_dir: Path, redis_url: str | None) -> Settings:
    return Settings(
        database_url=database_url,
        redis_url=redis_url,
        var_dir=var_dir,
        secret_key="bench",
        public_base_url=ORIGIN,
        market_source="sim",
        sim_tick_ms=60_000,
        stale_after_ms=3_600_000,
        rate_limit_signup_ip_per_hour=1000,
        rate_limit_api_key_per_min=BUDGET,
        rate_limit_session_per_min=BUDGET,
        rate_limit_compat_weight_per_min=BUDGET,
        rate_limit_unauthenticated_ip_per_min=BUDGET,
        tiers_enforced=False,
    )


def _scope(path: str, query: str = "", headers: list[tuple[bytes, bytes]] | None = None) -> Any:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", b"testserver"), (b"user-agent", b"bench"), *(headers or [])],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 443),
    }


async def _receive() -> Any:
    return {"type": "http.request", "body": b"", "more_body": False}


async def call(app: Any, scope: Any) -> int:
    """One request through the app's ASGI interface; its status."""
    status = 0

    async def send(message: Any) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]

    await app(dict(scope), _receive, send)
    return status


def signed_queries(secret: str, count: int) -> Iterator[str]:
    """`count` signed /fapi/v2/account queries, each stamped when it is made."""
    for _ in range(count):
        query = urlencode({"recvWindow": 60000, "timestamp": int(time.time() * 1000)})
        sig = hmac.new(secret.encode(), query.encode(), hashlib.sha256).hexdigest()
        yield f"{query}&signature={sig}"


async def idle_rates(statements: Statements) -> tuple[float, float]:
    """(CPU seconds, statements) per second of wall time with no requests."""
    loop = asyncio.get_running_loop()
    cpu, wall, count = time.process_time(), loop.time(), statements.count
    await asyncio.sleep(IDLE_S)
    span = loop.time() - wall
    return (time.process_time() - cpu) / span, (statements.count - count) / span


@asynccontextmanager
async def prepared(settings: Settings) -> Any:
    """The running app and a scope factory per kind of request."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        user = await sign_up(app)
        pid = (await user.portfolio())["id"]
        key = await user.api_key(scope="read")
        api_key, secret = await user.compat_key(pid)
        await user.client.aclose()
        await scheduled_runs_settled(app)  # none of their first runs is measured with a read
        native = [(b"authorization", f"Bearer {key}".encode())]
        compat = [(b"x-mbx-apikey", api_key.encode())]

        def factories(count: int) -> dict[str, Callable[[], Any]]:
            queries = iter(list(signed_queries(secret, count + 1)))
            return {
                KINDS[0]: lambda: _scope("/fapi/v1/ping"),
                KINDS[1]: lambda: _scope("/v1/market/status"),
                KINDS[2]: lambda: _scope(f"/v1/portfolios/{pid}", headers=native),
                KINDS[3]: lambda: _scope("/fapi/v2/account", next(queries), compat),
            }

        yield app, factories


async def run_kind(app: Any, make: Callable[[], Any], count: int) -> None:
    scopes = [make() for _ in range(count)]
    for scope in scopes:
        status = await call(app, scope)
        assert status == 200, f"{scope['path']} answered {status}"


async def measure(
    settings: Settings, statements: Statements, count: int, rounds: int
) -> dict[str, list[tuple[float, float]]]:
    """Per kind, one (µs of CPU, statements) per request for each round."""
    figures: dict[str, list[tuple[float, float]]] = {kind: [] for kind in KINDS}
    async with prepared(settings) as (app, factories):
        for make in factories(200).values():  # warm-up: caches, pools, first imports
            await run_kind(app, make, 200)
        cpu_rate, sql_rate = await idle_rates(statements)
        loop = asyncio.get_running_loop()
        for _ in range(rounds):
            for kind, make in factories(count).items():
                scopes = [make() for _ in range(count)]
                cpu, wall, sql = time.process_time(), loop.time(), statements.count
                for scope in scopes:
                    status = await call(app, scope)
                    assert status == 200, f"{kind} answered {status}"
                span = loop.time() - wall
                used = time.process_time() - cpu - cpu_rate * span
                sent = statements.count - sql - sql_rate * span
                figures[kind].append((used / count * 1e6, sent / count))
    return figures


async def profile(settings: Settings, kind: str, count: int) -> None:
    async with prepared(settings) as (app, factories):
        make = factories(count + 200)[kind]
        await run_kind(app, make, 200)
        scopes = [make() for _ in range(count)]
        profiler = cProfile.Profile(time.process_time)  # CPU, not wall time
        profiler.enable()
        for scope in scopes:
            await call(app, scope)
        profiler.disable()
    saved = Path(tempfile.gettempdir()) / "reads.prof"
    profiler.dump_stats(saved)
    print(f"profile saved to {saved}")
    stats = pstats.Stats(profiler)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sqlite-only", action="store_true")
    parser.add_argument("--profile", choices=KINDS, default=None)
    args = parser.parse_args()
    statements = Statements()
    rows: list[tuple[str, dict[str, list[tuple[float, float]]]]] = []
    before = load_average()
    with tempfile.TemporaryDirectory() as var:
        sqlite = _settings(f"sqlite+aiosqlite:///{var}/bench.db", Path(var), None)
        if args.profile and args.sqlite_only:
            await profile(sqlite, args.profile, args.requests)
            return
        rows.append(("SQLite", await measure(sqlite, statements, args.requests, args.rounds)))
        if not args.sqlite_only:
            base = os.environ.get("PAPERTRADE_TEST_POSTGRES_URL", PG_DEFAULT)
            redis = os.environ.get("PAPERTRADE_BENCH_REDIS_URL", REDIS_DEFAULT)
            async with AsyncExitStack() as stack:
                url = await stack.enter_async_context(
                    fresh_database(base, f"papertrade_bench_reads_{os.getpid()}")
                )
                settings = _settings(url, Path(var), redis)
                if args.profile:
                    await profile(settings, args.profile, args.requests)
                    return
                figures = await measure(settings, statements, args.requests, args.rounds)
                rows.append(("PostgreSQL + Redis", figures))
    print(f"Machine: {machine()}")
    print(f"Load average before: {before}; after: {load_average()}")
    print(f"{args.requests} requests per kind and round, {args.rounds} rounds, in process (ASGI)\n")
    print("| database | request | CPU per request, best round | median round | SQL per request |")
    print("|---|---|---:|---:|---:|")
    for database, figures in rows:
        for kind in KINDS:
            ordered = sorted(figures[kind])
            best, median = ordered[0], ordered[len(ordered) // 2]
            print(
                f"| {database} | {kind} | {best[0]:.0f} µs | {median[0]:.0f} µs | {median[1]:.2f} |"
            )
    for database, figures in rows:
        for kind in KINDS[2:]:
            cpu_us = sorted(figures[kind])[len(figures[kind]) // 2][0]
            print(
                f"\nCPU per authenticated read, {database}, {kind}: {cpu_us:.0f} µs (median "
                f"round); target ≤ {TARGET_US:.0f} µs (issue 32)"
            )


if __name__ == "__main__":
    asyncio.run(main())
