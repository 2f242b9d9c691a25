"""Kill -9 the service repeatedly under load and check that nothing acknowledged was lost.

Used by the quick test in this package and by `bench/bench_crash.py` (longer runs); the scale-out
version (PostgreSQL, Redis, two processes, the engine leader killed) builds on these parts in
`tests/reliability/failover.py`.
"""

import asyncio
import contextlib
import hashlib
import hmac
import os
import random
import sqlite3
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import asyncpg
import httpx

from tests.reliability import forks

SCALE = Decimal(10) ** -8
SYMBOL = "BTCUSDT"
QUANTITY = "0.002"

STARTUP_S = 90  # seconds a started service has to answer /healthz


@dataclass
class CrashReport:
    kills: int = 0
    acknowledged: int = 0
    lost: list[int] = field(default_factory=list)
    duplicate_fills: list[int] = field(default_factory=list)
    overfilled: list[int] = field(default_factory=list)
    ledger_mismatches: list[int] = field(default_factory=list)
    position_mismatches: list[str] = field(default_factory=list)  # "<portfolio>:<symbol>"
    resting_lost: list[int] = field(default_factory=list)

    def add(self, name: str, item: Any) -> None:
        """Record one problem once (checks run after every round)."""
        found: list[Any] = getattr(self, name)
        if item not in found:
            found.append(item)


@dataclass
class Truth:
    """What the load clients were told: the database is checked against it."""

    acked: dict[int, dict[str, Any]] = field(default_factory=dict)  # order id → acknowledgement
    cancelled: set[int] = field(default_factory=set)  # cancels acknowledged
    cancel_sent: set[int] = field(default_factory=set)  # cancels sent (perhaps done, unseen)
    marks: list[tuple[int, Decimal]] = field(default_factory=list)  # (quote time, mark) seen

    def frozen(self) -> "Truth":
        """A copy to check a snapshot taken after this moment against (every acknowledged order
        was committed before it; the live load goes on adding to the original)."""
        return Truth(dict(self.acked), set(self.cancelled), set(self.cancel_sent), [])


@dataclass
class Account:
    key: str  # native write API key
    portfolios: list[int]
    compat: dict[int, tuple[str, str]] = field(default_factory=dict)  # portfolio → (key, secret)


class Service:
    """`papertrade serve` in a process of its own that can be killed with SIGKILL (SQLite by
    default), forked from one that has imported the service (forks.py)."""

    def __init__(
        self,
        var_dir: Path,
        port: int,
        env: dict[str, str] | None = None,
        command: list[str] | None = None,
    ):
        self.var_dir = var_dir
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.env = env or {}
        binary = str(Path(sys.executable).parent / "papertrade")
        serve = [binary, "serve", "--port", str(port), "--log-level", "warning"]
        self.command = command or serve
        self.process: BaseProcess | None = None

    @property
    def pid(self) -> int | None:
        alive = self.process is not None and self.process.is_alive()
        return self.process.pid if alive and self.process is not None else None

    def start(self) -> None:
        self.var_dir.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "PAPERTRADE_VAR_DIR": str(self.var_dir),
            "PAPERTRADE_MARKET_SOURCE": "sim",
            "PAPERTRADE_SIM_TICK_MS": "100",
            "PAPERTRADE_TIERS_ENFORCED": "false",  # several portfolios per user
            "PAPERTRADE_PASSWORD_HASH_TIME_COST": "1",  # as in make_settings (tests/conftest.py)
            "PAPERTRADE_PASSWORD_HASH_MEMORY_KIB": "8192",
            "PAPERTRADE_PUBLIC_BASE_URL": self.url,
            "PAPERTRADE_RATE_LIMIT_API_KEY_PER_MIN": "1000000",
            "PAPERTRADE_RATE_LIMIT_SESSION_PER_MIN": "1000000",
            "PAPERTRADE_RATE_LIMIT_COMPAT_WEIGHT_PER_MIN": "1000000",
            "PAPERTRADE_RATE_LIMIT_COMPAT_ORDERS_PER_10S": "1000000",
            "PAPERTRADE_RATE_LIMIT_COMPAT_ORDERS_PER_MIN": "1000000",
            **self.env,
        }
        self.process = forks.start(self.command, env, str(self.var_dir / "server.log"))
        # A cold start imports the whole service: on a loaded machine (load 20 on 2 cores)
        # that took longer than 30 s. A process that died is reported at once, with its log.
        # One probing client: each new httpx client loads the CA bundle, 35 ms of CPU.
        deadline = time.monotonic() + STARTUP_S
        with httpx.Client(timeout=1) as probe:
            while time.monotonic() < deadline:
                if not self.process.is_alive():
                    tail = (self.var_dir / "server.log").read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"the service exited ({self.process.exitcode}):\n{tail}")
                with contextlib.suppress(httpx.HTTPError):
                    if probe.get(self.url + "/healthz").status_code == 200:
                        return
                time.sleep(0.1)
        raise RuntimeError(f"service did not come up within {STARTUP_S} s")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()  # SIGKILL
        self.process.join()

    def stop(self) -> None:
        if self.process is not None and self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=30)


async def setup(url: str, *, compat: bool = False) -> Account:
    """A user with a write API key and three well-funded portfolios (with /fapi keys if asked)."""
    async with httpx.AsyncClient(base_url=url, headers={"Origin": url}) as client:
        await client.post(
            "/v1/auth/signup",
            json={"email": f"crash-{time.time_ns()}@example.com", "password": "crash-test-pass"},
        )
        csrf = {"X-CSRF-Token": client.cookies.get("csrf_token") or ""}
        key = (await client.post("/v1/user/api-keys", json={"scope": "write"}, headers=csrf)).json()
        account = Account(key["key"], [])
        for i in range(3):
            made = await client.post(
                "/v1/portfolios",
                json={"name": f"crash {i}", "initial_balance": "1000000"},
                headers=csrf,
            )
            pid = made.json()["id"]
            account.portfolios.append(pid)
            if compat:
                pair = await client.post(f"/v1/portfolios/{pid}/api-keys", json={}, headers=csrf)
                account.compat[pid] = (pair.json()["api_key"], pair.json()["api_secret"])
    return account


def _signed(secret: str, params: dict[str, Any]) -> str:
    query = urlencode({**params, "timestamp": int(time.time() * 1000)})
    return (
        f"{query}&signature={hmac.new(secret.encode(), query.encode(), hashlib.sha256).hexdigest()}"
    )


class _Client:
    """One load client: native orders on /v1, and on /fapi when the account has compat keys."""

    def __init__(self, account: Account, truth: Truth, seed: int, fapi_share: float):
        self.account = account
        self.truth = truth
        self.rng = random.Random(seed)
        self.fapi_share = fapi_share if account.compat else 0.0

    async def mark(self, client: httpx.AsyncClient) -> Decimal:
        quote = (await client.get("/v1/market/quotes", params={"symbol": SYMBOL})).json()[0]
        mark = Decimal(str(quote["mark_price"]))
        self.truth.marks.append((int(quote["time"]), mark))
        return mark

    def _pick(self) -> tuple[str, dict[str, Any]]:
        """(market | limit | cancel, order fields)."""
        roll = self.rng.random()
        if roll < 0.4:
            return "market", {"side": self.rng.choice(["buy", "sell"])}
        if roll < 0.85:
            # Within 4 bps of the mark: the simulated price crosses many of them within seconds,
            # so even a short, loaded run has resting orders for the engine to fill.
            return "limit", {"offset": Decimal(self.rng.randint(-4, 4)) / 10000}
        return "cancel", {}

    async def step(self, client: httpx.AsyncClient) -> None:
        pid = self.rng.choice(self.account.portfolios)
        mark = await self.mark(client)
        kind, fields = self._pick()
        fapi = self.rng.random() < self.fapi_share
        if kind == "cancel":
            open_ids = [
                i
                for i, o in self.truth.acked.items()
                if o["status"] == "new" and i not in self.truth.cancel_sent
            ]
            if open_ids:
                await self.cancel(client, self.rng.choice(open_ids), fapi)
            return
        body: dict[str, Any] = {"type": kind, "portfolio_id": pid}
        if kind == "market":
            body["side"] = fields["side"]
        else:
            offset = fields["offset"]
            body["side"] = "buy" if offset < 0 else "sell"
            body["price"] = str((mark * (1 + offset)).quantize(Decimal("0.1")))
        sent_at = int(time.time() * 1000)
        ack = await (self.fapi_order(client, body) if fapi else self.native_order(client, body))
        if ack is not None:
            order_id, status = ack
            self.truth.acked[order_id] = {
                **body,
                "surface": "fapi" if fapi else "v1",
                "status": status,
                "sent_at": sent_at,
                "acked_at": int(time.time() * 1000),
            }

    async def native_order(
        self, client: httpx.AsyncClient, body: dict[str, Any]
    ) -> tuple[int, str] | None:
        headers = {"Authorization": f"Bearer {self.account.key}"}
        payload = {**body, "symbol": SYMBOL, "quantity": QUANTITY}
        response = await client.post("/v1/order", json=payload, headers=headers)
        if response.status_code != 201:
            return None
        return int(response.json()["id"]), str(response.json()["status"])

    async def fapi_order(
        self, client: httpx.AsyncClient, body: dict[str, Any]
    ) -> tuple[int, str] | None:
        key, secret = self.account.compat[body["portfolio_id"]]
        params: dict[str, Any] = {
            "symbol": SYMBOL,
            "side": body["side"].upper(),
            "type": body["type"].upper(),
            "quantity": QUANTITY,
        }
        if body["type"] == "limit":
            params.update(price=body["price"], timeInForce="GTC")
        response = await client.post(
            "/fapi/v1/order?" + _signed(secret, params), headers={"X-MBX-APIKEY": key}
        )
        if response.status_code != 200:
            return None
        return int(response.json()["orderId"]), str(response.json()["status"]).lower()

    async def cancel(self, client: httpx.AsyncClient, order_id: int, fapi: bool) -> None:
        self.truth.cancel_sent.add(order_id)
        portfolio = self.truth.acked[order_id]["portfolio_id"]
        if fapi and portfolio in self.account.compat:
            key, secret = self.account.compat[portfolio]
            query = _signed(secret, {"symbol": SYMBOL, "orderId": order_id})
            response = await client.delete("/fapi/v1/order?" + query, headers={"X-MBX-APIKEY": key})
        else:
            headers = {"Authorization": f"Bearer {self.account.key}"}
            response = await client.delete(f"/v1/order/{order_id}", headers=headers)
        if response.status_code == 200:
            self.truth.cancelled.add(order_id)


async def load(
    urls: Sequence[str],
    account: Account,
    truth: Truth,
    stop: asyncio.Event,
    seed: int,
    *,
    fapi_share: float = 0.0,
) -> None:
    """Place and cancel orders until `stop`, on any of `urls` (a dead one is skipped)."""
    worker = _Client(account, truth, seed, fapi_share)
    clients = {url: httpx.AsyncClient(base_url=url, timeout=5) for url in urls}
    try:
        while not stop.is_set():
            url = worker.rng.choice(list(urls))
            try:
                await worker.step(clients[url])
            except (httpx.HTTPError, KeyError, IndexError, ValueError):
                await asyncio.sleep(0.05)  # the process is down (being killed): keep trying
    finally:
        for client in clients.values():
            await client.aclose()


@dataclass
class Snapshot:
    """The rows the checks read, as stored (quantities as scaled integers)."""

    orders: dict[int, tuple[Any, ...]]  # id → (type, status, quantity, filled, is_open)
    fills: list[tuple[int, int, str, str, int]]  # (order id, portfolio, symbol, side, quantity)
    balances: list[tuple[int, int, Any]]  # (portfolio, balance, sum of its ledger)
    positions: dict[tuple[int, str], int]  # (portfolio, symbol) → quantity


ORDERS_SQL = "SELECT id, type, status, quantity, filled_quantity, is_open FROM orders"
FILLS_SQL = "SELECT order_id, portfolio_id, symbol, side, quantity FROM fills"
BALANCES_SQL = (
    "SELECT p.id, p.balance, (SELECT SUM(amount) FROM ledger_entries l "
    "WHERE l.portfolio_id = p.id) FROM portfolios p"
)
POSITIONS_SQL = "SELECT portfolio_id, symbol, quantity FROM positions"


# Every snapshot is read in one transaction: the checks run while the load goes on, and a fill
# committed between two separate reads would look like a position or an order out of step.


def read_sqlite(db_path: Path) -> Snapshot:
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        conn.execute("BEGIN")  # one WAL snapshot for every read below
        return Snapshot(
            orders={row[0]: row[1:] for row in conn.execute(ORDERS_SQL)},
            fills=list(conn.execute(FILLS_SQL)),
            balances=list(conn.execute(BALANCES_SQL)),
            positions={(r[0], r[1]): r[2] for r in conn.execute(POSITIONS_SQL)},
        )
    finally:
        conn.close()


async def read_postgres(database_url: str) -> Snapshot:
    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            return Snapshot(
                orders={r[0]: tuple(r[1:]) for r in await conn.fetch(ORDERS_SQL)},
                fills=[tuple(r) for r in await conn.fetch(FILLS_SQL)],
                balances=[tuple(r) for r in await conn.fetch(BALANCES_SQL)],
                positions={(r[0], r[1]): r[2] for r in await conn.fetch(POSITIONS_SQL)},
            )
    finally:
        await conn.close()


def check(snapshot: Snapshot, report: CrashReport, truth: Truth) -> None:
    """Check the database against what clients were told (problems accumulate in `report`)."""
    fills: dict[int, list[int]] = {}
    held: dict[tuple[int, str], int] = {}
    for order_id, portfolio_id, symbol, side, quantity in snapshot.fills:
        fills.setdefault(order_id, []).append(quantity)
        signed = quantity if side == "buy" else -quantity
        held[(portfolio_id, symbol)] = held.get((portfolio_id, symbol), 0) + signed
    for order_id, seen in list(truth.acked.items()):
        row = snapshot.orders.get(order_id)
        if row is None:
            report.add("lost", order_id)
            continue
        kind, status, quantity, filled, is_open = row
        got = fills.get(order_id, [])
        if sum(got) != filled or filled > quantity:
            report.add("overfilled", order_id)
        if kind == "market" and len(got) != 1:
            report.add("duplicate_fills", order_id)
        if (
            seen["status"] == "new"
            and order_id not in truth.cancelled
            and not (is_open or status in ("filled", "canceled", "expired"))
        ):
            report.add("resting_lost", order_id)
    for pid, balance, ledger in snapshot.balances:
        if balance != ledger:
            report.add("ledger_mismatches", pid)
    for where in set(held) | set(snapshot.positions):
        if held.get(where, 0) != snapshot.positions.get(where, 0):
            report.add("position_mismatches", f"{where[0]}:{where[1]}")
    report.acknowledged = len(truth.acked)


def verify(db_path: Path, report: CrashReport, truth: Truth) -> None:
    """Check an embedded (SQLite) service's database against what clients were told."""
    check(read_sqlite(db_path), report, truth)


async def between_kills(
    seconds: float, made: Callable[[], int], more: int | None, within: float = 120
) -> None:
    """Wait `seconds`, then until `made()` (work the load did: acknowledgements, events…) has
    grown by `more` since the call, so a loaded machine gets as much work between two kills as
    a quiet one; a machine that cannot do it within `within` seconds fails with what it did."""
    start = made()
    await asyncio.sleep(seconds)
    if more is None:
        return
    deadline = asyncio.get_running_loop().time() + within
    while (now := made()) < start + more:
        assert asyncio.get_running_loop().time() < deadline, f"{now - start} of {more} made"
        await asyncio.sleep(0.05)


async def run(
    var_dir: Path,
    port: int,
    *,
    kills: int,
    seconds_between: float,
    acked_between: int | None = None,
    clients: int = 4,
) -> CrashReport:
    """Load the service, kill -9 it `kills` times, restart it each time, then verify. Between
    kills: `seconds_between`, and at least `acked_between` more orders acknowledged if given."""
    service = Service(var_dir, port)
    report = CrashReport()
    truth = Truth()
    service.start()
    try:
        account = await setup(service.url)
        stop = asyncio.Event()
        workers = [
            asyncio.create_task(load([service.url], account, truth, stop, seed))
            for seed in range(clients)
        ]
        acked = lambda: len(truth.acked)  # noqa: E731
        for _ in range(kills):
            await between_kills(seconds_between, acked, acked_between)
            await asyncio.to_thread(service.kill)
            report.kills += 1
            await asyncio.to_thread(service.start)
        await between_kills(seconds_between, acked, acked_between)
        stop.set()
        await asyncio.gather(*workers)
    finally:
        service.stop()
    verify(var_dir / "papertrade.db", report, truth)
    return report
