"""How a race test knows the other side has reached the lock it is about, on PostgreSQL: it
waits until the server reports sessions of the test's database waiting on a lock (never a
sleep, which passes on a loaded machine without the race ever happening)."""

import asyncio
from typing import Any

from sqlalchemy import text

from papertrade.db import Database

WITHIN_S = 30


async def lock_waiters(
    db: Database,
    *,
    query_like: str = "%",
    touching: str | None = None,
    blocked_by: int | None = None,
) -> int:
    """Sessions waiting on a lock whose statement matches `query_like`, (with `touching`) that
    already hold a lock on that table, and (with `blocked_by`) that wait for that backend: the
    app's other work, which may wait too, is then told apart from the paths a test races."""
    sql = (
        "SELECT count(*) FROM pg_stat_activity a WHERE a.datname = current_database()"
        " AND a.wait_event_type = 'Lock' AND a.query LIKE :query"
    )
    parameters: dict[str, object] = {"query": query_like}
    if touching is not None:
        sql += (
            " AND EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.granted"
            " AND l.relation = CAST(:touching AS regclass))"
        )
        parameters["touching"] = touching
    if blocked_by is not None:
        sql += " AND CAST(:blocker AS integer) = ANY(pg_blocking_pids(a.pid))"
        parameters["blocker"] = blocked_by
    async with db.engine.connect() as connection:
        found = await connection.scalar(text(sql), parameters)
    return int(found or 0)


async def until_waiting(
    db: Database,
    count: int = 1,
    *,
    query_like: str = "%",
    touching: str | None = None,
    blocked_by: int | None = None,
    running: "asyncio.Task[Any] | None" = None,
) -> None:
    """Until `count` such sessions wait; `running`, the task expected to be among them, must not
    finish before."""
    deadline = asyncio.get_running_loop().time() + WITHIN_S
    while True:
        waiting = await lock_waiters(
            db, query_like=query_like, touching=touching, blocked_by=blocked_by
        )
        if waiting >= count:
            return
        if running is not None and running.done():
            raise AssertionError(f"it did not wait for the lock: {running.result()!r}")
        assert asyncio.get_running_loop().time() < deadline, f"{waiting} waiting, not {count}"
        await asyncio.sleep(0.02)
