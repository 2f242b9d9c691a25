"""Two writers chaining a portfolio that has no chain head yet (the outbox consumer and the daily
job) both create it: the second must wait for the first and use its head, not fail on the
duplicate key (on PostgreSQL a row lock on an absent row locks nothing)."""

import asyncio
from collections.abc import Awaitable, Callable

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.chain.proofs import GENESIS
from papertrade.chain.service import catch_up, catch_up_many
from papertrade.config import Settings
from papertrade.db import Database
from papertrade.models import ChainHead
from tests.conftest import PG_URL
from tests.databases import from_template
from tests.pglocks import until_waiting

PORTFOLIO = 4242  # no fills or ledger rows: only the head is created


@pytest.mark.skipif(PG_URL is None, reason="SQLite's writes take one lock: they cannot race")
@pytest.mark.parametrize("first", ["job", "consumer"])
async def test_the_consumer_and_the_job_creating_one_head_at_once_both_succeed(
    isolated_settings: Settings, first: str
) -> None:
    await from_template(isolated_settings.database_url)
    db = Database(isolated_settings.database_url)
    try:
        chain = {"job": catch_up, "consumer": _catch_up_one}
        second = "consumer" if first == "job" else "job"
        async with db.sessions() as holder, db.sessions() as other:
            await holder.begin()
            assert await chain[first](holder, PORTFOLIO) == 0  # its head inserted, uncommitted
            racing = asyncio.create_task(_in_transaction(other, chain[second]))
            await until_waiting(db, running=racing)  # the other writer waits for the held head
            await holder.commit()
            assert await asyncio.wait_for(racing, 30) == 0
        async with db.sessions() as session:
            heads = (await session.scalars(select(ChainHead))).all()
            assert [(h.portfolio_id, h.seq, h.hash) for h in heads] == [(PORTFOLIO, 0, GENESIS)]
    finally:
        await db.engine.dispose()


async def _catch_up_one(session: AsyncSession, portfolio_id: int) -> int:
    return await catch_up_many(session, [portfolio_id])


async def _in_transaction(
    session: AsyncSession, chain: Callable[[AsyncSession, int], Awaitable[int]]
) -> int:
    async with session.begin():
        return await chain(session, PORTFOLIO)
