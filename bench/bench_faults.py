"""Orders and WebSocket clients through each fault (issue 23): what was acknowledged, lost,
executed without being acknowledged, the answers by status, and the time to recover.

Usage:
  python bench/bench_faults.py [--seconds 5] [--only postgres|redis|disk]

  postgres  PostgreSQL (PAPERTRADE_TEST_POSTGRES_URL, default postgresql+asyncpg://postgres@
            127.0.0.1:5432/test; a fresh database, dropped afterwards) behind a TCP proxy that is
            cut for --seconds, then restored.
  redis     two processes (apps) on one database sharing a redis-server of the bench's own,
            killed for --seconds, then started again empty; orders on process one, a WebSocket
            client on process two.
  disk      embedded SQLite on a 4 MB tmpfs (needs root to mount), filled for --seconds, then
            freed.

The service runs in this process (as the tests run it), served over real HTTP on 127.0.0.1;
four clients place MARKET orders, each with a client order id of its own, without pause.
"""

import argparse
import asyncio
import contextlib
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

# The test helpers read the PostgreSQL address when they are imported.
os.environ.setdefault(
    "PAPERTRADE_TEST_POSTGRES_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import conftest
from tests.conftest import make_settings, running_app
from tests.faults.helpers import postgres_behind_proxy, redis_server
from tests.faults.test_disk_full import fill, small_filesystem
from tests.liveserver import live_server
from tests.ws.conftest import fresh_database
from tests.ws.helpers import socket

CLIENTS = 4


@dataclass
class Report:
    fault: str
    answers: Counter[str] = field(default_factory=Counter)
    acknowledged: set[str] = field(default_factory=set)
    unknown: set[str] = field(default_factory=set)  # 503 "unknown": outcome not known
    refused: set[str] = field(default_factory=set)  # any other answer: "not executed"
    recovered_s: float | None = None  # from the fault's end to the next acknowledged order
    lost: int = 0
    executed_unacknowledged: int = 0
    unknown_executed: int = 0
    ws_note: str = "—"


async def _load(
    url: str, key: str, pid: int, report: Report, stop: asyncio.Event, fault_over: list[float]
) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        while not stop.is_set():
            coid = uuid.uuid4().hex[:20]
            body = {
                "portfolio_id": pid,
                "symbol": "BTCUSDT",
                "side": "buy",
                "type": "market",
                "quantity": "0.01",
                "client_order_id": coid,
            }
            try:
                answer = await client.post(
                    "/v1/order", json=body, headers={"Authorization": f"Bearer {key}"}
                )
            except httpx.HTTPError as exc:
                report.answers[type(exc).__name__] += 1
                report.unknown.add(coid)
                continue
            report.answers[str(answer.status_code)] += 1
            if answer.status_code == 201:
                report.acknowledged.add(coid)
                if fault_over and report.recovered_s is None:
                    report.recovered_s = time.monotonic() - fault_over[0]
            elif "unknown" in answer.text:
                report.unknown.add(coid)
            else:
                report.refused.add(coid)
                await asyncio.sleep(0.05)  # as a client honouring Retry-After loosely would


async def _run(
    url: str,
    key: str,
    pid: int,
    report: Report,
    seconds: float,
    fault: Callable[[], Awaitable[None]],
    repair: Callable[[], Awaitable[None]],
) -> None:
    stop = asyncio.Event()
    fault_over: list[float] = []
    clients = [
        asyncio.create_task(_load(url, key, pid, report, stop, fault_over)) for _ in range(CLIENTS)
    ]
    await asyncio.sleep(1.0)
    await fault()
    await asyncio.sleep(seconds)
    await repair()
    fault_over.append(time.monotonic())
    await asyncio.sleep(3.0)
    stop.set()
    await asyncio.gather(*clients)


async def _reconcile(url: str, key: str, pid: int, report: Report) -> None:
    stored: set[str] = set()
    before: int | None = None
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:
        while True:
            params: dict[str, Any] = {"portfolio_id": pid, "limit": 500}
            if before is not None:
                params["before_id"] = before
            page = (
                await client.get(
                    "/v1/order", params=params, headers={"Authorization": f"Bearer {key}"}
                )
            ).json()
            stored |= {o["client_order_id"] for o in page["orders"]}
            before = page["next_before_id"]
            if before is None:
                break
    report.lost = len(report.acknowledged - stored)
    report.executed_unacknowledged = len(report.refused & stored)
    report.unknown_executed = len(report.unknown & stored)


@contextlib.asynccontextmanager
async def _user(app: Any) -> AsyncIterator[tuple[str, int]]:
    user = await conftest.sign_up(app)
    pid = (await user.portfolio(initial_balance="100000000"))["id"]
    key = await user.api_key()
    yield key, pid


async def postgres(seconds: float, var: Path) -> Report:
    report = Report("PostgreSQL unreachable")
    async with (
        postgres_behind_proxy(f"papertrade_bench_faults_{uuid.uuid4().hex[:8]}", var) as (
            settings,
            proxy,
        ),
        running_app(_unlimited(settings)) as app,
        live_server(app) as url,
        _user(app) as (key, pid),
    ):
        await _price(app)

        async def cut() -> None:
            proxy.cut()

        async def restore() -> None:
            proxy.restore()

        await _run(url, key, pid, report, seconds, cut, restore)
        await _reconcile(url, key, pid, report)
    return report


async def redis(seconds: float, var: Path) -> Report:
    report = Report("Redis killed (2 processes)")
    async with (
        redis_server() as server,
        fresh_database(f"bench_faults_{uuid.uuid4().hex[:6]}", var) as url,
    ):
        settings = _unlimited(make_settings(url, var, redis_url=server.url))
        async with (
            running_app(settings) as one,
            running_app(settings) as two,
            live_server(one) as one_url,
            live_server(two) as two_url,
            _user(one) as (key, pid),
        ):
            await _price(one)
            await _price(two)
            async with socket(two_url, key) as ws:
                await ws.subscribe(f"portfolio:{pid}")
                fills: set[str] = set()
                resyncs = 0

                async def watch() -> None:
                    nonlocal resyncs
                    while True:
                        message = await ws.recv()
                        if message.get("type") == "resync":
                            resyncs += 1
                        elif (
                            message.get("event") == "order.filled"
                            or message.get("type") == "order.filled"
                        ):
                            data = message.get("data", {})
                            fills.add(str(data.get("client_order_id")))

                watcher = asyncio.create_task(watch())

                async def kill() -> None:
                    server.kill()

                async def start() -> None:
                    await server.start()

                await _run(one_url, key, pid, report, seconds, kill, start)
                await asyncio.sleep(1.0)
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await watcher
            await _reconcile(one_url, key, pid, report)
            missed = len(report.acknowledged - fills)
            report.ws_note = (
                f"{len(report.acknowledged & fills)} fills delivered, {missed} missed, "
                f"{resyncs} resync"
            )
    return report


async def disk(seconds: float, var: Path) -> Report:
    report = Report("SQLite disk full")
    with small_filesystem(var / "data") as data:
        settings = _unlimited(make_settings(f"sqlite+aiosqlite:///{data / 'papertrade.db'}", data))
        async with running_app(settings) as app, live_server(app) as url, _user(app) as (key, pid):
            await _price(app)
            fillers: list[Path] = []

            async def fill_up() -> None:
                fillers.append(fill(data))

            async def free() -> None:
                fillers.pop().unlink()

            await _run(url, key, pid, report, seconds, fill_up, free)
            await _reconcile(url, key, pid, report)
    return report


def _unlimited(settings: Any) -> Any:
    return settings.model_copy(
        update={
            "rate_limit_api_key_per_min": 100_000_000,
            "rate_limit_session_per_min": 100_000_000,
        }
    )


async def _price(app: Any) -> None:
    from tests.trading_api.helpers import set_price

    await set_price(app, "BTCUSDT", "60000")


def _print(reports: list[Report], seconds: float) -> None:
    print(f"{CLIENTS} clients placing MARKET orders without pause; each fault lasts {seconds} s\n")
    print(
        "| fault | acknowledged | lost | executed, unacknowledged | unknown (executed) | "
        "answers by status | recovered after | WebSocket |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---|")
    for r in reports:
        answers = ", ".join(f"{k}: {v}" for k, v in sorted(r.answers.items()))
        recovered = f"{r.recovered_s:.2f} s" if r.recovered_s is not None else "—"
        print(
            f"| {r.fault} | {len(r.acknowledged)} | {r.lost} | {r.executed_unacknowledged} | "
            f"{len(r.unknown)} ({r.unknown_executed}) | {answers} | {recovered} | {r.ws_note} |"
        )


async def main(seconds: float, only: str | None) -> None:
    reports = []
    for name, fault in (("postgres", postgres), ("redis", redis), ("disk", disk)):
        if only and name != only:
            continue
        with tempfile.TemporaryDirectory() as var:
            try:
                reports.append(await fault(seconds, Path(var)))
            except BaseException as exc:
                print(f"{name}: skipped ({type(exc).__name__}: {exc})")
    _print(reports, seconds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--only", choices=["postgres", "redis", "disk"])
    arguments = parser.parse_args()
    asyncio.run(main(arguments.seconds, arguments.only))
