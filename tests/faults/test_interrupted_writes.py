"""SQLite's write lock: a write cut off in the middle of a statement leaves it free for the next,
and a write that cannot get it within the busy timeout answers 503 "not executed", never 500.

A unit of work's task can be cancelled while a statement runs: an app stopping its background
work (the outbox's delivery, mid-INSERT … RETURNING), a cancelled request or job. SQLAlchemy then
closes that connection. A statement with rows still unread (a write's RETURNING, a read) kept
a closed SQLite connection alive until Python freed its cursor, and with it the transaction and
SQLite's write lock: every write of the service waited out the busy timeout and answered 500
"database is locked" until the garbage collector ran (seen in the suite: an app stopped in
one test, sign-ups of the next failing).
"""

import asyncio
import contextlib
import logging
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event, text

from papertrade import db as db_module
from tests.conftest import ORIGIN, bearer, client_for, make_settings, running_app, sign_up
from tests.fapi.helpers import make_bot
from tests.trading_api.helpers import set_price

# SQLite's own locking, on whichever database the run uses (tests/databases.py)
pytestmark = pytest.mark.one_database

SLOW_S = 0.3


def _can_write(path: Path) -> bool:
    """Whether another connection (another process, say) gets SQLite's write lock at once."""
    with contextlib.closing(sqlite3.connect(path, timeout=1)) as probe:
        try:
            probe.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError:
            return False
        probe.rollback()
    return True


async def test_a_write_cancelled_mid_statement_leaves_the_write_lock_free(
    tmp_path: Path,
) -> None:
    path = tmp_path / "papertrade.db"
    async with running_app(make_settings(f"sqlite+aiosqlite:///{path}", tmp_path)) as app:
        db = app.state.ctx.db
        inside, left = threading.Event(), threading.Event()

        def slow(value: Any) -> Any:  # runs inside the statement, on the connection's thread
            inside.set()
            time.sleep(SLOW_S)
            left.set()
            return value

        def with_slow(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.create_function("slow", 1, slow)

        event.listen(db.engine.sync_engine, "connect", with_slow)
        await db.engine.dispose()  # pooled connections come back with slow()

        async def interrupted() -> None:
            async with db.unit_of_work() as session:
                # A write whose rows come back (as the ORM's inserts do), cut off mid-statement.
                await session.execute(
                    text(
                        "INSERT INTO jobs (id, name, arguments, status, progress, progress_text,"
                        " attempts, worker, queued_at, updated_at) VALUES ('cut-off', 'test.cut',"
                        " '{}', 'queued', 0, '', 0, '', 0, 0) RETURNING slow(id)"
                    )
                )

        task = asyncio.create_task(interrupted())
        assert await asyncio.to_thread(inside.wait, 10), "the statement never started"
        task.cancel()
        # Kept: its traceback holds the cursor, so the garbage collector cannot end the lock
        # early here (in a service it runs when it runs).
        with pytest.raises(asyncio.CancelledError) as cancelled:
            await task
        assert await asyncio.to_thread(left.wait, 10), "the statement never ended"
        # Its thread then finishes the statement and the connection's close: a moment, not
        # the lifetime of the traceback kept above.
        deadline = time.monotonic() + 10
        while not await asyncio.to_thread(_can_write, path):
            assert time.monotonic() < deadline, "a closed connection holds the lock"
            await asyncio.sleep(0.05)
        async with asyncio.timeout(10):  # not the busy timeout's 30 s, then a 500
            user = await sign_up(app)
        await user.client.aclose()
        async with db.reader() as session:
            stored = await session.scalar(text("SELECT count(*) FROM jobs WHERE id = 'cut-off'"))
        assert stored == 0  # the cancelled unit of work committed nothing
        assert cancelled.value is not None


@contextlib.contextmanager
def write_lock_held(path: Path) -> Iterator[None]:
    """SQLite's write lock taken by another connection, as another process's long write would."""
    with contextlib.closing(sqlite3.connect(path, timeout=5)) as other:
        other.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            other.rollback()


async def test_a_write_that_cannot_get_the_lock_in_time_answers_503(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(db_module, "SQLITE_BUSY_TIMEOUT_S", 0.5)  # 30 s in service
    path = tmp_path / "papertrade.db"
    async with (
        running_app(make_settings(f"sqlite+aiosqlite:///{path}", tmp_path)) as app,
        client_for(app) as client,
    ):
        user = await sign_up(app)
        key = await user.api_key()
        bot = await make_bot(user, client, initial_balance="100000")
        await set_price(app, "BTCUSDT", "60000")
        order = {
            "portfolio_id": bot.portfolio_id,
            "symbol": "BTCUSDT",
            "side": "buy",
            "type": "market",
            "quantity": "0.01",
        }
        caplog.set_level(logging.WARNING)

        with write_lock_held(path):
            signup = await client.post(
                "/v1/auth/signup",
                json={"email": "busy@example.com", "password": "s3cret-pass"},
                headers={"Origin": ORIGIN},
            )
            created = await user.post("/v1/portfolios", json={"name": "busy"})
            placed = await client.post("/v1/order", json=order, headers=bearer(key))
            compatible = await bot.call(
                "POST",
                "/v1/order",
                {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"},
            )

        for answer in (signup, created, placed):
            assert answer.status_code == 503, answer.text
            assert answer.headers["Retry-After"].isdigit()
            assert answer.json()["error"] == "service_unavailable"
            assert "not executed" in answer.json()["msg"]
        assert compatible.status_code == 503, compatible.text
        assert compatible.json()["code"] == -1001  # ccxt: OperationFailed, retried
        logged = [r for r in caplog.records if r.name.startswith("papertrade")]
        assert not [r.getMessage() for r in logged if r.levelno >= logging.ERROR]  # no traceback
        assert [r.getMessage() for r in logged if r.name == "papertrade.faults"] == [
            "database unavailable: OperationalError: database is locked"
        ]

        # Nothing of them was executed, and each goes through once the lock is free.
        again = await client.post(
            "/v1/auth/signup",
            json={"email": "busy@example.com", "password": "s3cret-pass"},
            headers={"Origin": ORIGIN},
        )
        assert again.status_code == 201, again.text
        assert (await user.post("/v1/portfolios", json={"name": "busy"})).status_code == 201
        assert (await client.post("/v1/order", json=order, headers=bearer(key))).status_code == 201
        mine = (await user.get("/v1/portfolios/my")).json()
        assert [p["name"] for p in mine].count("busy") == 1
        await user.client.aclose()
