"""Kill -9 while a leader trades and the outbox mirrors the fills: after the restarts every
follower's copy of every leader fill exists exactly once (the consumer's cursor commits with its
copies, and copy_trades is unique per relation, leader order and leg)."""

import asyncio
import json
import sqlite3
import time
from pathlib import Path

import httpx
import pytest

from tests.conftest import PG_URL
from tests.liveserver import free_port
from tests.reliability.crashkit import Service

FOLLOWERS = 8
CONSUMER = "copy.mirror"


async def _setup(url: str) -> tuple[str, int, list[int]]:
    """A leader (API key, public portfolio) and one user copying it with FOLLOWERS portfolios."""
    portfolios: list[int] = []
    leader_key, leader_portfolio = "", 0
    for role in ("leader", "follower"):
        async with httpx.AsyncClient(base_url=url, headers={"Origin": url}) as client:
            email = f"copy-{role}-{time.time_ns()}@example.com"
            await client.post("/v1/auth/signup", json={"email": email, "password": "crash-pass-1"})
            csrf = {"X-CSRF-Token": client.cookies.get("csrf_token") or ""}
            if role == "leader":
                key = await client.post("/v1/user/api-keys", json={"scope": "write"}, headers=csrf)
                leader_key = key.json()["key"]
                made = await client.post(
                    "/v1/portfolios",
                    json={"name": "lead", "visibility": "public", "initial_balance": "1000000"},
                    headers=csrf,
                )
                leader_portfolio = made.json()["id"]
                continue
            for i in range(FOLLOWERS):
                made = await client.post(
                    "/v1/portfolios",
                    json={"name": f"copy {i}", "initial_balance": "100000"},
                    headers=csrf,
                )
                body = {
                    "leader_portfolio_id": leader_portfolio,
                    "portfolio_id": made.json()["id"],
                    "mode": "multiplier",
                    "multiplier": 1,
                    "allocation": 10000,
                    "slippage_pct": "1.5",
                }
                followed = await client.post("/v1/copy/relations", json=body, headers=csrf)
                assert followed.status_code == 201, followed.text
                portfolios.append(made.json()["id"])
    return leader_key, leader_portfolio, portfolios


async def _trade(url: str, key: str, portfolio: int, stop: asyncio.Event) -> None:
    """The leader opens and closes BTCUSDT over and over (failures while the service is down
    are expected: it is being killed)."""
    side = "buy"
    async with httpx.AsyncClient(
        base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=5
    ) as client:
        while not stop.is_set():
            body = {
                "portfolio_id": portfolio,
                "symbol": "BTCUSDT",
                "side": side,
                "type": "market",
                "quantity": "0.01",
            }
            try:
                if (await client.post("/v1/order", json=body)).status_code == 201:
                    side = "sell" if side == "buy" else "buy"
            except httpx.HTTPError:
                await asyncio.sleep(0.1)


PER_LIFE = 7  # the leader's fills in each life of the service


def _leader_fills(db: Path, leader: int) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute(
            "SELECT COUNT(*) FROM outbox_events WHERE type = 'order.filled' AND portfolio_id = ?",
            (leader,),
        ).fetchone()
    return int(row[0])


async def _until_filled(db: Path, leader: int, count: int, within: float = 90) -> int:
    deadline = asyncio.get_running_loop().time() + within
    while (seen := await asyncio.to_thread(_leader_fills, db, leader)) < count:
        assert asyncio.get_running_loop().time() < deadline, f"{seen} fills, wanted {count}"
        await asyncio.sleep(0.1)
    return seen


def _pending(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        last = conn.execute("SELECT COALESCE(MAX(id), 0) FROM outbox_events").fetchone()[0]
        row = conn.execute(
            "SELECT last_id FROM outbox_cursors WHERE consumer = ?", (CONSUMER,)
        ).fetchone()
    return int(last) - (int(row[0]) if row else 0)


@pytest.mark.skipif(PG_URL is not None, reason="the embedded mode under test is SQLite")
async def test_every_copy_exists_once_after_kill_minus_nine(tmp_path: Path) -> None:
    service = Service(tmp_path, free_port(), env={"PAPERTRADE_TIERS_ENFORCED": "false"})
    db = tmp_path / "papertrade.db"
    service.start()
    try:
        key, leader, followers = await _setup(service.url)
        stop = asyncio.Event()
        trader = asyncio.create_task(_trade(service.url, key, leader, stop))
        # Each life of the service fills some of the leader's orders before it is killed
        # mid-flight (counted, not timed: a restart on a loaded machine takes seconds).
        filled = 0
        for _ in range(3):
            filled = await _until_filled(db, leader, filled + PER_LIFE)
            await asyncio.to_thread(service.kill)
            await asyncio.to_thread(service.start)
        await _until_filled(db, leader, filled + PER_LIFE)
        stop.set()
        await trader
        for _ in range(600):  # the mirror catches up with every committed fill
            if _pending(db) == 0:
                break
            await asyncio.sleep(0.1)
        assert _pending(db) == 0
    finally:
        service.stop()

    with sqlite3.connect(db) as conn:
        starts = dict(conn.execute("SELECT id, start_event_id FROM copy_relations"))
        fills = [
            (event_id, json.loads(data)["id"])
            for event_id, data in conn.execute(
                "SELECT id, data FROM outbox_events WHERE type = 'order.filled' "
                "AND portfolio_id = ?",
                (leader,),
            )
        ]
        legs = conn.execute(
            "SELECT relation_id, leader_order_id, status, follower_order_id FROM copy_trades"
        ).fetchall()
        marks = ",".join("?" * len(followers))
        copy_orders = [
            row[0]
            for row in conn.execute(
                f"SELECT id FROM orders WHERE source = 'copy' AND portfolio_id IN ({marks})",
                followers,
            )
        ]
    assert len(fills) > 20  # the leader really traded across the kills
    mirrored = {(relation, order) for relation, order, _, _ in legs}
    missing = [
        (relation, order)
        for event_id, order in fills
        for relation, start in starts.items()
        if event_id > start and (relation, order) not in mirrored
    ]
    assert missing == []
    # Each copied leg has its one order, and no copy order exists without its leg.
    copied = [follower_order for _, _, status, follower_order in legs if status == "copied"]
    assert len(copied) > 20
    assert sorted(copied) == sorted(copy_orders)
    assert len(set(copied)) == len(copied)
