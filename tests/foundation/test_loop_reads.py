"""SQLite's hottest reads run on the event loop's own thread (Database.read_row and read): they
see every commit at once, and a locked database sends them the usual way, through a thread,
so the event loop never waits for SQLite's lock."""

import asyncio
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import bindparam, column, select, table, text
from sqlalchemy.orm import Session

from papertrade.db import Database

pytestmark = pytest.mark.one_database  # reads on the event loop's thread are SQLite's own

T = table("t", column("id"), column("v"))
READ = select(T.c.v).where(T.c.id == bindparam("id"))


async def _database(path: Path) -> Database:
    database = Database(f"sqlite+aiosqlite:///{path}")
    async with database.unit_of_work() as session:
        await session.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"))
        await session.execute(text("INSERT INTO t VALUES (1, 'first')"))
    return database


async def test_a_read_sees_the_last_commit(tmp_path: Path) -> None:
    database = await _database(tmp_path / "reads.db")
    try:
        row = await database.read_row(READ, {"id": 1})
        assert row is not None and row["v"] == "first"
        async with database.unit_of_work() as session:
            await session.execute(text("UPDATE t SET v = 'second' WHERE id = 1"))
        row = await database.read_row(READ, {"id": 1})
        assert row is not None and row["v"] == "second"

        def both(session: Session) -> list[str]:
            return list(session.scalars(text("SELECT v FROM t ORDER BY id")))

        assert await database.read(both) == ["second"]
        assert await database.read_row(READ, {"id": 2}) is None
    finally:
        await database.dispose()


@pytest.mark.parametrize("how", ["read_row", "read"])
async def test_a_locked_database_does_not_stop_the_event_loop(tmp_path: Path, how: str) -> None:
    path = tmp_path / "reads.db"
    database = await _database(path)
    await database.dispose()  # its pooled connections, each with a shared lock, are closed
    # Another process's connection keeps the database to itself (exclusive locking mode holds
    # its lock until it closes): every other reader is refused, until then.
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("UPDATE t SET v = 'held' WHERE id = 1")
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    async def read() -> str:
        if how == "read":
            return await database.read(lambda session: str(session.scalar(READ, {"id": 1})))
        row = await database.read_row(READ, {"id": 1})
        assert row is not None
        return str(row["v"])

    ticker = asyncio.create_task(tick())
    reading = asyncio.create_task(read())
    try:
        await asyncio.sleep(0.5)
        assert not reading.done(), "the read should wait for the lock"
        assert ticks >= 20, f"the event loop stood still while the read waited ({ticks} ticks)"
        holder.close()
        assert await asyncio.wait_for(reading, 10) == "held"
    finally:
        ticker.cancel()
        holder.close()
        await database.dispose()
