"""A burst of one chat's updates waits for the chat's turn in memory, one job per process at the
database: each job waiting there would hold a pooled connection, and twenty of them (the worker's
concurrency) take half the pool from every request of the process."""

import asyncio
import time

import orjson
import pytest
from sqlalchemy import text

from papertrade.config import Settings
from papertrade.db import Database
from papertrade.models import TelegramUpdate
from papertrade.tg import jobs as tg_jobs
from papertrade.tg import updates
from tests.conftest import PG_URL
from tests.jobs.helpers import wait_for_job
from tests.pglocks import WITHIN_S
from tests.telegram.helpers import message_update, processed, telegram_app

CHAT = 1011
FOLDED = (CHAT % 2**32) - 2**31  # how the job folds a chat into the lock's second key
# Sessions asking for the chat's turn that PostgreSQL has not given yet.
WAITING_FOR_THE_TURN = text(
    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    " AND classid = CAST(:space AS oid) AND objid = CAST(:chat AS oid) AND objsubid = 2"
)


async def _waiting(db: Database) -> int:
    async with db.engine.connect() as connection:
        found = await connection.scalar(
            WAITING_FOR_THE_TURN,
            # pg_locks shows the keys as unsigned 32-bit numbers
            {"space": tg_jobs._CHAT_TURNS, "chat": FOLDED % 2**32},
        )
    return int(found or 0)


@pytest.mark.skipif(PG_URL is None, reason="on SQLite the turn is this process's lock alone")
async def test_a_burst_of_one_chats_updates_waits_at_the_database_once(
    isolated_settings: Settings,
) -> None:
    async with telegram_app(isolated_settings) as (app, _fake):
        db: Database = app.state.ctx.db
        received = [message_update(f"hello {n}", tg_user=CHAT) for n in range(4)]
        async with app.state.ctx.transaction() as uow:  # stored as the webhook stores them
            for update in received:
                update["message"]["date"] = int(time.time())
                uow.session.add(
                    TelegramUpdate(
                        update_id=update["update_id"],
                        body=orjson.dumps(update).decode(),
                        chat_id=updates.chat_of(update),
                    )
                )
        # Another process has the chat's turn: its transaction holds the lock.
        async with db.engine.connect() as other_process:
            transaction = await other_process.begin()
            await other_process.execute(
                text("SELECT pg_advisory_xact_lock(:space, :chat)"),
                {"space": tg_jobs._CHAT_TURNS, "chat": FOLDED},
            )
            jobs = [
                await app.state.jobs.enqueue(tg_jobs.PROCESS_UPDATE, update_id=u["update_id"])
                for u in received
            ]
            for job in jobs:
                await wait_for_job(app, job, "running")
            # Every job has started; one of them reaches the database's lock and waits there.
            deadline = time.monotonic() + WITHIN_S
            while await _waiting(db) < 1:
                assert time.monotonic() < deadline, "no job came to the chat's turn"
                await asyncio.sleep(0.02)
            # The others, started as well, go no further than this process's own turn: however
            # often the server is asked, one session waits for the chat.
            most = max([await _waiting(db) for _ in range(40)])
            assert most == 1, f"{most} sessions (each a pooled connection) waited for one chat"
            await transaction.rollback()
        # The turn passed on, each update was processed.
        for job in jobs:
            await wait_for_job(app, job, "succeeded")
        assert None not in [await processed(app, u["update_id"]) for u in received]
