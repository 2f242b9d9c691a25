"""Kill -9 the service while fills are being turned into notifications: after restarts every
fill the consumer passed is in its owner's inbox exactly once, and none is missing."""

import asyncio
import sqlite3
import sys
from pathlib import Path

import pytest

from papertrade.notifications.consumers import INBOX
from tests.conftest import PG_URL
from tests.liveserver import free_port
from tests.reliability.crashkit import Service, Truth, between_kills, load, setup


def _progress(db: Path) -> tuple[int, int]:
    """(the last notifiable outbox event, the consumer's cursor)."""
    with sqlite3.connect(db) as conn:
        last = conn.execute(
            "SELECT COALESCE(MAX(id), 0) FROM outbox_events WHERE type = 'order.filled'"
        ).fetchone()[0]
        row = conn.execute(
            "SELECT last_id FROM outbox_cursors WHERE consumer = ?", (INBOX,)
        ).fetchone()
    return int(last), int(row[0]) if row else 0


FILLS_BETWEEN_KILLS = 8


def _fills(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(
            conn.execute(
                "SELECT COUNT(*) FROM outbox_events WHERE type = 'order.filled'"
            ).fetchone()[0]
        )


@pytest.mark.skipif(PG_URL is not None, reason="the embedded mode under test is SQLite")
async def test_kill_minus_nine_while_notifying_loses_and_repeats_nothing(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "tests.notifications.inbox_service", str(port)]
    service = Service(tmp_path, port, command=command)
    db = tmp_path / "papertrade.db"
    service.start()
    try:
        account = await setup(service.url)
        stop, truth = asyncio.Event(), Truth()
        workers = [
            asyncio.create_task(load([service.url], account, truth, stop, seed))
            for seed in range(3)
        ]
        made_fills = lambda: _fills(db)  # noqa: E731
        for _ in range(3):  # each kill lands after fills were made, however slow the machine
            await between_kills(2.0, made_fills, FILLS_BETWEEN_KILLS)
            await asyncio.to_thread(service.kill)
            await asyncio.to_thread(service.start)
        await between_kills(1.0, made_fills, FILLS_BETWEEN_KILLS)
        stop.set()
        await asyncio.gather(*workers)
        for _ in range(600):  # the consumer catches up with what was committed
            last, cursor = _progress(db)
            if cursor >= last:
                break
            await asyncio.sleep(0.1)
    finally:
        service.stop()
    with sqlite3.connect(db) as conn:
        (cursor,) = conn.execute(
            "SELECT last_id FROM outbox_cursors WHERE consumer = ?", (INBOX,)
        ).fetchone()
        fills = [
            row[0]
            for row in conn.execute(
                "SELECT id FROM outbox_events WHERE type = 'order.filled' AND id <= ?", (cursor,)
            )
        ]
        delivered = dict(
            conn.execute(
                "SELECT event_id, COUNT(*) FROM notifications WHERE kind = 'fill' GROUP BY event_id"
            )
        )
    assert len(fills) > 3 * FILLS_BETWEEN_KILLS  # the load really ran across the restarts
    assert [f for f in fills if f not in delivered] == []
    assert [e for e, count in delivered.items() if count != 1] == []
    assert set(delivered) <= set(fills)
