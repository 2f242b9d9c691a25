"""Kill -9 the service repeatedly under load and check that nothing acknowledged was lost.

Used by the quick test in this package and by `bench/bench_crash.py` (longer runs).
"""

import asyncio
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx

SCALE = Decimal(10) ** -8


@dataclass
class CrashReport:
    kills: int = 0
    acknowledged: int = 0
    lost: list[int] = field(default_factory=list)
    duplicate_fills: list[int] = field(default_factory=list)
    overfilled: list[int] = field(default_factory=list)
    ledger_mismatches: list[int] = field(default_factory=list)
    resting_lost: list[int] = field(default_factory=list)


class Service:
    """`papertrade serve` on SQLite in a subprocess that can be killed with SIGKILL."""

    def __init__(self, var_dir: Path, port: int):
        self.var_dir = var_dir
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {
            **os.environ,
            "PAPERTRADE_VAR_DIR": str(self.var_dir),
            "PAPERTRADE_MARKET_SOURCE": "sim",
            "PAPERTRADE_SIM_TICK_MS": "100",
            "PAPERTRADE_PUBLIC_BASE_URL": self.url,
            "PAPERTRADE_RATE_LIMIT_API_KEY_PER_MIN": "1000000",
            "PAPERTRADE_RATE_LIMIT_SESSION_PER_MIN": "1000000",
        }
        binary = Path(sys.executable).parent / "papertrade"
        log = (self.var_dir / "server.log").open("ab")
        self.process = subprocess.Popen(
            [str(binary), "serve", "--port", str(self.port), "--log-level", "warning"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(self.url + "/healthz", timeout=1).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError("service did not come up")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)


async def _setup(url: str) -> tuple[str, list[int]]:
    async with httpx.AsyncClient(base_url=url, headers={"Origin": url}) as client:
        await client.post(
            "/v1/auth/signup",
            json={"email": f"crash-{time.time_ns()}@example.com", "password": "crash-test-pass"},
        )
        csrf = {"X-CSRF-Token": client.cookies.get("csrf_token") or ""}
        key = (await client.post("/v1/user/api-keys", json={"scope": "write"}, headers=csrf)).json()
        ids = []
        for i in range(3):
            made = await client.post(
                "/v1/portfolios",
                json={"name": f"crash {i}", "initial_balance": "1000000"},
                headers=csrf,
            )
            ids.append(made.json()["id"])
    return key["key"], ids


async def _load(
    url: str,
    key: str,
    portfolios: list[int],
    acked: dict[int, dict[str, Any]],
    cancelled: set[int],
    stop: asyncio.Event,
    seed: int,
) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {key}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=5) as client:
        while not stop.is_set():
            try:
                pid = rng.choice(portfolios)
                quotes = (
                    await client.get("/v1/market/quotes", params={"symbol": "BTCUSDT"})
                ).json()
                mark = Decimal(str(quotes[0]["mark_price"]))
                roll = rng.random()
                if roll < 0.4:
                    body: dict[str, Any] = {"type": "market", "side": rng.choice(["buy", "sell"])}
                elif roll < 0.85:
                    offset = Decimal(rng.randint(-8, 8)) / 10000
                    price = (mark * (1 + offset)).quantize(Decimal("0.1"))
                    body = {
                        "type": "limit",
                        "side": "buy" if offset < 0 else "sell",
                        "price": str(price),
                    }
                else:
                    open_ids = [
                        i for i, o in acked.items() if o["status"] == "new" and i not in cancelled
                    ]
                    if open_ids:
                        target = rng.choice(open_ids)
                        response = await client.delete(f"/v1/order/{target}")
                        if response.status_code == 200:
                            cancelled.add(target)
                    continue
                body.update(portfolio_id=pid, symbol="BTCUSDT", quantity="0.002")
                response = await client.post("/v1/order", json=body)
                if response.status_code == 201:
                    acked[response.json()["id"]] = response.json()
            except (httpx.HTTPError, KeyError, IndexError, ValueError):
                await asyncio.sleep(0.05)  # the service is down (being killed): keep trying


def verify(
    db_path: Path, report: CrashReport, acked: dict[int, dict[str, Any]], cancelled: set[int]
) -> None:
    """Check the database against what clients were told."""
    conn = sqlite3.connect(db_path)
    try:
        orders = {
            row[0]: row[1:]
            for row in conn.execute(
                "SELECT id, type, status, quantity, filled_quantity, is_open FROM orders"
            )
        }
        fills: dict[int, list[int]] = {}
        for order_id, quantity in conn.execute("SELECT order_id, quantity FROM fills"):
            fills.setdefault(order_id, []).append(quantity)
        for order_id, seen in acked.items():
            row = orders.get(order_id)
            if row is None:
                report.lost.append(order_id)
                continue
            kind, status, quantity, filled, is_open = row
            got = fills.get(order_id, [])
            if sum(got) != filled or filled > quantity:
                report.overfilled.append(order_id)
            if kind == "market" and len(got) != 1:
                report.duplicate_fills.append(order_id)
            if (
                seen["status"] == "new"
                and order_id not in cancelled
                and not (is_open or status in ("filled", "canceled", "expired"))
            ):
                report.resting_lost.append(order_id)
        for pid, balance, ledger in conn.execute(
            "SELECT p.id, p.balance, (SELECT SUM(amount) FROM ledger_entries l "
            "WHERE l.portfolio_id = p.id) FROM portfolios p"
        ):
            if balance != ledger:
                report.ledger_mismatches.append(pid)
    finally:
        conn.close()
    report.acknowledged = len(acked)


async def run(
    var_dir: Path, port: int, *, kills: int, seconds_between: float, clients: int = 4
) -> CrashReport:
    """Load the service, kill -9 it `kills` times, restart it each time, then verify."""
    service = Service(var_dir, port)
    report = CrashReport()
    acked: dict[int, dict[str, Any]] = {}
    cancelled: set[int] = set()
    service.start()
    try:
        key, portfolios = await _setup(service.url)
        stop = asyncio.Event()
        workers = [
            asyncio.create_task(_load(service.url, key, portfolios, acked, cancelled, stop, seed))
            for seed in range(clients)
        ]
        for _ in range(kills):
            await asyncio.sleep(seconds_between)
            await asyncio.to_thread(service.kill)
            report.kills += 1
            await asyncio.to_thread(service.start)
        await asyncio.sleep(seconds_between)
        stop.set()
        await asyncio.gather(*workers)
    finally:
        service.stop()
    verify(var_dir / "papertrade.db", report, acked, cancelled)
    return report
