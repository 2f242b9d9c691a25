"""Kill -9 the service between commits and their delivery to an outbox consumer, and check that
every event reached the consumer's effects exactly once (tests and bench/bench_crash.py)."""

import asyncio
import json
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tests.reliability.crashkit import Service, Truth, between_kills, load, setup
from tests.reliability.outbox_service import CONSUMER


@dataclass
class OutboxReport:
    kills: int = 0
    events: int = 0
    pending_at_kills: list[int] = field(default_factory=list)  # committed, not yet delivered
    undelivered: list[int] = field(default_factory=list)  # passed by the cursor, no effect
    duplicated: list[int] = field(default_factory=list)
    orders_without_event: list[int] = field(default_factory=list)


def _pending(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        last = conn.execute("SELECT COALESCE(MAX(id), 0) FROM outbox_events").fetchone()[0]
        row = conn.execute(
            "SELECT last_id FROM outbox_cursors WHERE consumer = ?", (CONSUMER,)
        ).fetchone()
    return int(last) - (int(row[0]) if row else 0)


def _events(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM outbox_events").fetchone()[0])


async def run_outbox(
    var_dir: Path,
    port: int,
    *,
    kills: int,
    seconds_between: float = 2.0,
    events_between: int | None = None,
    clients: int = 4,
) -> OutboxReport:
    """Load the service, kill -9 it `kills` times, restart it each time, let the consumer catch
    up, then compare the outbox with the consumer's effects. Between kills: `seconds_between`,
    and at least `events_between` more events committed if given."""
    command = [sys.executable, "-m", "tests.reliability.outbox_service", str(port)]
    service = Service(var_dir, port, command=command)
    db = var_dir / "papertrade.db"
    report = OutboxReport()
    service.start()
    try:
        account = await setup(service.url)
        stop = asyncio.Event()
        truth = Truth()
        workers = [
            asyncio.create_task(load([service.url], account, truth, stop, seed))
            for seed in range(clients)
        ]
        events = lambda: _events(db)  # noqa: E731
        for _ in range(kills):
            await between_kills(seconds_between, events, events_between)
            await asyncio.to_thread(service.kill)
            report.kills += 1
            report.pending_at_kills.append(_pending(db))
            await asyncio.to_thread(service.start)
        await between_kills(seconds_between, events, events_between)
        stop.set()
        await asyncio.gather(*workers)
        for _ in range(600):  # the consumer catches up with everything committed
            if _pending(db) == 0:
                break
            await asyncio.sleep(0.1)
    finally:
        service.stop()
    _verify(db, report)
    return report


def _verify(db: Path, report: OutboxReport) -> None:
    with sqlite3.connect(db) as conn:
        events = dict(conn.execute("SELECT id, data FROM outbox_events WHERE type LIKE 'order.%'"))
        every = [row[0] for row in conn.execute("SELECT id FROM outbox_events")]
        handled = dict(
            conn.execute("SELECT event_id, COUNT(*) FROM consumer_effects GROUP BY event_id")
        )
        orders = [row[0] for row in conn.execute("SELECT id FROM orders")]
        (cursor,) = conn.execute(
            "SELECT last_id FROM outbox_cursors WHERE consumer = ?", (CONSUMER,)
        ).fetchone()
    report.events = len(every)
    # Events the engine committed after the last check (fills of resting orders as the price
    # moves on) wait in the outbox for the next start; every one the consumer passed must have
    # its effect.
    report.undelivered = [i for i in every if i <= cursor and i not in handled]
    report.duplicated = [event_id for event_id, count in handled.items() if count > 1]
    announced = {json.loads(data)["id"] for data in events.values()}
    report.orders_without_event = [order_id for order_id in orders if order_id not in announced]
