"""Kill -9 the engine leader of a scale-out deployment under load, over and over.

Two `papertrade serve` processes share one PostgreSQL database and one Redis. Load clients place
and cancel orders through /v1 and /fapi on both; the process holding the engine's advisory lock is
found through PostgreSQL (`pg_locks` → the client port of its connection → the process owning that
socket) and killed with SIGKILL, a standby takes over, and the killed process is restarted as the
new standby. After every round the database is checked against what the clients were told
(crashkit.check). At the end, resting orders are also checked against the marks the clients saw:
a resting order that a later price crossed while a leader was alive and settled must have filled,
which is only possible if it was in the books of the leader of that time.
"""

import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import pairwise
from pathlib import Path

import asyncpg
import redis.asyncio as redis

from papertrade.engine.leader import LOCK_KEY
from papertrade.kit.deployment import namespace
from tests.liveserver import free_port
from tests.reliability.crashkit import (
    CrashReport,
    Service,
    Truth,
    between_kills,
    check,
    load,
    read_postgres,
    setup,
)

FOLLOW_MARGIN_MS = 1_000  # an order placed in a follower reaches the leader's book within this
SETTLE_MS = 1_000  # a leader that has led this long has rebuilt its books
DYING_MS = 1_500  # ticks this close to a kill may have died with the leader, unfilled
LEADER_SQL = """
SELECT a.client_port FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objid::bigint = $1
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
"""


@dataclass
class FailoverReport(CrashReport):
    takeover_s: list[float] = field(default_factory=list)  # kill → lock held by the other
    longest_price_gap_ms: int = 0  # between consecutive marks the clients saw
    fapi_orders: int = 0
    maker_fills: int = 0  # resting orders the engines filled
    crossed_checked: int = 0  # resting orders a settled leader's price crossed
    crossed_unfilled: list[int] = field(default_factory=list)  # …that did not fill


def _url(database_url: str) -> str:
    return database_url.replace("postgresql+asyncpg://", "postgresql://")


@asynccontextmanager
async def fresh_database(base_url: str, name: str) -> AsyncIterator[str]:
    """A new PostgreSQL database on the server of `base_url`, dropped afterwards."""
    conn = await asyncpg.connect(_url(base_url))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    try:
        yield base_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        conn = await asyncpg.connect(_url(base_url))
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()


def _socket_owner(port: int, services: list[Service]) -> Service | None:
    """The service whose process holds the TCP socket bound to local `port`."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                cells = line.split()
                if int(cells[1].rsplit(":", 1)[1], 16) == port:
                    inodes.add(f"socket:[{cells[9]}]")
    for service in services:
        if service.pid is None:
            continue
        with suppress(OSError):
            for fd in Path(f"/proc/{service.pid}/fd").iterdir():
                with suppress(OSError):
                    if os.readlink(fd) in inodes:
                        return service
    return None


async def leader_of(conn: asyncpg.Connection, services: list[Service]) -> Service | None:
    """The live service holding the engine's advisory lock, if any."""
    for row in await conn.fetch(LEADER_SQL, LOCK_KEY):
        owner = _socket_owner(int(row["client_port"]), services)
        if owner is not None:
            return owner
    return None


async def wait_for_leader(
    conn: asyncpg.Connection, services: list[Service], within: float = 30
) -> Service:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        found = await leader_of(conn, services)
        if found is not None:
            return found
        await asyncio.sleep(0.02)
    raise RuntimeError("no process took the engine leadership")


def _crossed(truth: Truth, windows: list[tuple[int, int]]) -> dict[int, int]:
    """Resting orders (id → crossing time) that a mark seen inside a settled leadership crossed."""
    marks = sorted(truth.marks)
    crossed = {}
    for order_id, seen in truth.acked.items():
        if seen["status"] != "new" or order_id in truth.cancel_sent:
            continue
        price, buy = Decimal(seen["price"]), seen["side"] == "buy"
        ready = seen["acked_at"] + FOLLOW_MARGIN_MS
        for t, mark in marks:
            if t < ready or not any(a <= t <= b for a, b in windows):
                continue
            if (buy and mark <= price) or (not buy and mark >= price):
                crossed[order_id] = t
                break
    return crossed


async def _maker_fills(conn: asyncpg.Connection) -> int:
    return int(await conn.fetchval("SELECT count(*) FROM fills WHERE liquidity = 'maker'"))


async def run_failover(
    var_dir: Path,
    database_url: str,
    redis_url: str,
    *,
    kills: int,
    seconds_between: float,
    acked_between: int | None = None,
    clients: int = 4,
    fapi_share: float = 0.3,
) -> FailoverReport:
    """Two processes under load; kill -9 the engine leader `kills` times; verify each round.
    Between kills: `seconds_between`, and at least `acked_between` more orders acknowledged if
    given."""
    env = {
        "PAPERTRADE_DATABASE_URL": database_url,
        "PAPERTRADE_REDIS_URL": redis_url,
        "PAPERTRADE_SECRET_KEY": "failover-test-secret",
    }
    services = [Service(var_dir / name, free_port(), env) for name in ("a", "b")]
    report, truth = FailoverReport(), Truth()
    windows: list[tuple[int, int]] = []  # wall ms with one settled, living leader
    stop = asyncio.Event()
    workers: list[asyncio.Task[None]] = []
    try:
        for service in services:  # one after the other: the first applies the migrations
            await asyncio.to_thread(service.start)
        conn_db = await asyncpg.connect(_url(database_url))
        try:
            leader = await wait_for_leader(conn_db, services)
            term = _now()
            account = await setup(services[0].url, compat=True)
            urls = [s.url for s in services]
            workers = [
                asyncio.create_task(load(urls, account, truth, stop, seed, fapi_share=fapi_share))
                for seed in range(clients)
            ]
            restart: asyncio.Future[None] | None = None
            acked = lambda: len(truth.acked)  # noqa: E731
            for _ in range(kills):
                await between_kills(seconds_between, acked, acked_between)
                if restart is not None:
                    await restart  # always a standby ready before the leader dies
                leader = await wait_for_leader(conn_db, services)
                windows.append((term + SETTLE_MS, _now() - DYING_MS))
                started = time.monotonic()
                await asyncio.to_thread(leader.kill)
                report.kills += 1
                # Back as the new standby (it starts in the time the survivor takes over).
                restart = asyncio.ensure_future(asyncio.to_thread(leader.start))
                await wait_for_leader(conn_db, services)
                report.takeover_s.append(time.monotonic() - started)
                term = _now()
                told = truth.frozen()
                check(await read_postgres(database_url), report, told)
            await between_kills(seconds_between, acked, acked_between)
            if restart is not None:
                await restart
            # The simulated price sometimes stays within a few bps for a whole short run: keep
            # the load going (up to 30 s more) until the last leader has matched a resting order.
            deadline = time.monotonic() + 30
            while not await _maker_fills(conn_db) and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.5)
            stop.set()
            await asyncio.gather(*workers)
            windows.append((term + SETTLE_MS, _now()))
            await asyncio.sleep(SETTLE_MS / 1000)  # the last crossings' fills commit
            report.maker_fills = await _maker_fills(conn_db)
        finally:
            await conn_db.close()
    finally:
        stop.set()
        for task in workers:
            task.cancel()
        await asyncio.gather(*workers, return_exceptions=True)
        for service in services:
            await asyncio.to_thread(service.stop)
        await _forget(redis_url, database_url)
    snapshot = await read_postgres(database_url)
    check(snapshot, report, truth)
    crossed = _crossed(truth, windows)
    report.crossed_checked = len(crossed)
    for order_id in crossed:
        if snapshot.orders.get(order_id, (None, None))[1] != "filled":
            report.add("crossed_unfilled", order_id)
    report.fapi_orders = sum(1 for o in truth.acked.values() if o.get("surface") == "fapi")
    times = sorted({t for t, _ in truth.marks})
    report.longest_price_gap_ms = max((b - a for a, b in pairwise(times)), default=0)
    return report


async def _forget(redis_url: str, database_url: str) -> None:
    """Drop the deployment's keys from the shared Redis database."""
    client = redis.Redis.from_url(redis_url)
    try:
        keys = [k async for k in client.scan_iter(f"pt:{namespace(database_url)}:*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


def _now() -> int:
    return int(time.time() * 1000)
