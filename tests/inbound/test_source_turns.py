"""A burst of one source's alerts waits for the source's turn in memory, one job per process at
the database: each job waiting there would hold a pooled connection, and twenty of them (the
worker's concurrency) take half the pool from every request of the process."""

import orjson
import pytest
from sqlalchemy import select

from papertrade.config import Settings
from papertrade.db import Database
from papertrade.inbound import jobs as inbound_jobs
from papertrade.inbound import service as inbound_service
from papertrade.models import InboundEvent, InboundSource
from tests.conftest import PG_URL, running_app, sign_up
from tests.jobs.helpers import wait_for_job
from tests.pglocks import lock_waiters, until_waiting

# The statement a job's turn waits in: the source's row, locked.
TURN = "%inbound_sources%FOR NO KEY UPDATE%"


@pytest.mark.skipif(PG_URL is None, reason="on SQLite the turn is this process's lock alone")
async def test_a_burst_of_one_sources_alerts_waits_at_the_database_once(
    isolated_settings: Settings,
) -> None:
    async with running_app(isolated_settings) as app:
        ctx = app.state.ctx
        db: Database = ctx.db
        owner = await sign_up(app)
        source = (await owner.post("/v1/webhook-sources", json={"provider": "finnhub"})).json()
        arrived = [
            await inbound_service.store(
                ctx,
                "finnhub",
                f"{source['id']}:b-{n}",
                "alert",
                orjson.dumps({"id": f"b-{n}", "symbol": "BTCUSDT"}),
                source_id=source["id"],
                user_id=owner.id,
            )
            for n in range(4)
        ]
        # Another process has the source's turn: its transaction holds the row.
        async with db.sessions() as other_process, other_process.begin():
            held = select(InboundSource.id).where(InboundSource.id == source["id"])
            await other_process.execute(held.with_for_update(key_share=True))
            jobs = [
                await app.state.jobs.enqueue(inbound_jobs.PROCESS_EVENT, event_id=e.event_id)
                for e in arrived
            ]
            for job in jobs:
                await wait_for_job(app, job, "running")
            # Every job has started; one of them reaches the row and waits there.
            await until_waiting(db, query_like=TURN)
            # The others, started as well, go no further than this process's own turn: however
            # often the server is asked, one session waits for the source.
            most = max([await lock_waiters(db, query_like=TURN) for _ in range(40)])
            assert most == 1, f"{most} sessions (each a pooled connection) waited for one source"
            await other_process.rollback()
        # The turn passed on, each alert was processed.
        for job in jobs:
            await wait_for_job(app, job, "succeeded")
        async with db.reader() as session:
            done = await session.scalars(
                select(InboundEvent.processed_at).where(
                    InboundEvent.id.in_([e.event_id for e in arrived])
                )
            )
            assert None not in list(done)
