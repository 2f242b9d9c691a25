"""Deleting a strategy, alone or with its account, while the live pass records one of its bars.

The live pass claims the deployment's bar (a row lock on the deployment) and then writes the bar's
signal, whose row points at the strategy. Deleting locks the strategy and then stops its
deployments. When the deletion's lock on the strategy also kept out rows that point at it (a
plain FOR UPDATE does), each waited for the other and PostgreSQL killed one: CI's deleted account
answered a 500. The deletion now waits for the pass, and the pass is not kept waiting."""

import asyncio
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.db import Database
from papertrade.faults.outage import CONFLICT
from papertrade.models import Strategy, StrategyDeployment, StrategySignal
from papertrade.strategies.placing import _claim
from tests.conftest import PG_URL, User
from tests.pglocks import until_waiting
from tests.strategies.test_live import ALWAYS_LONG, deploy

FAR_BAR = 2**50  # later than any bar the app's own live pass claims meanwhile
# The deletion stopping the deployments (the app's live pass may wait at a deployment too)
DELETION = "UPDATE strategy_deployments SET status%"


async def _delete_strategy(user: User, sid: int) -> httpx.Response:
    return await user.client.delete(f"/v1/strategies/{sid}", headers=user.write_headers())


async def _delete_account(user: User, sid: int) -> httpx.Response:
    return await user.post("/v1/user/delete", json={"password": user.password})


@pytest.mark.skipif(PG_URL is None, reason="SQLite's writes take one lock: they cannot race")
@pytest.mark.parametrize(
    "deleting", [_delete_strategy, _delete_account], ids=["strategy", "account"]
)
async def test_deleting_while_the_live_pass_records_a_bar_waits_for_it(
    app: FastAPI, user_factory: Any, deleting: Any
) -> None:
    owner: User = await user_factory()
    portfolio = await owner.portfolio(name="bot")
    sid, deployment_id = await deploy(owner, ALWAYS_LONG, portfolio["id"])
    db: Database = app.state.ctx.db
    async with db.sessions() as live:
        await live.begin()
        claimed = await live.run_sync(lambda s: _claim(s, FAR_BAR, [deployment_id]))
        assert claimed == {deployment_id}
        deletion = asyncio.create_task(deleting(owner, sid))
        await until_waiting(
            db, query_like=DELETION, running=deletion
        )  # at the deployment the pass holds
        live.add(_signal(sid, deployment_id))
        await asyncio.wait_for(live.commit(), 30)  # before: a deadlock, one of the two killed
    answered = await asyncio.wait_for(deletion, 30)
    assert answered.status_code == 200, answered.text
    async with db.sessions() as session:
        status = await session.scalar(
            select(StrategyDeployment.status).where(StrategyDeployment.id == deployment_id)
        )
        kept = await _signal_count(session, deployment_id)
    assert (status, kept) == ("stopped", 1)  # stopped after the bar, whose signal stays on record


@pytest.mark.skipif(PG_URL is None, reason="SQLite's writes take one lock: they cannot deadlock")
async def test_a_request_postgresql_stops_to_break_a_deadlock_answers_503_not_executed(
    app: FastAPI, user_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Should a lock cycle still form with a writer the service does not order (here another
    client of the database), the request PostgreSQL stops answers 503 "not executed", never a
    500, and goes through when retried."""
    owner: User = await user_factory()
    portfolio = await owner.portfolio(name="bot")
    sid, deployment_id = await deploy(owner, ALWAYS_LONG, portfolio["id"])
    db: Database = app.state.ctx.db
    async with db.sessions() as other:
        await other.begin()
        await other.execute(text("SET LOCAL deadlock_timeout = '20s'"))  # the request: victim
        await other.execute(
            update(StrategyDeployment)
            .where(StrategyDeployment.id == deployment_id)
            .values(last_bar_ms=FAR_BAR)
        )
        deletion = asyncio.create_task(_delete_strategy(owner, sid))
        await until_waiting(
            db, query_like=DELETION, running=deletion
        )  # the strategy locked, waiting at the deployment
        locking = select(Strategy.id).where(Strategy.id == sid).with_for_update()
        assert await asyncio.wait_for(other.scalar(locking), 30) == sid  # a cycle: one must go
        answered = await asyncio.wait_for(deletion, 30)
        await other.commit()
    assert answered.status_code == 503, answered.text
    assert answered.headers["Retry-After"].isdigit()
    assert answered.json() == {"error": "service_unavailable", "msg": CONFLICT}
    assert not db.outages.down  # a conflict, not an outage: told as one, nothing else waits
    assert "database conflict, a transaction was not executed: Error: deadlock detected" in (
        caplog.text
    )
    (shown,) = (await owner.get(f"/v1/strategies/{sid}/deployments")).json()
    assert (shown["id"], shown["status"]) == (deployment_id, "running")  # not executed
    again = await _delete_strategy(owner, sid)
    assert again.status_code == 200, again.text
    assert (await owner.get(f"/v1/strategies/{sid}")).status_code == 404


def _signal(sid: int, deployment_id: int) -> StrategySignal:
    return StrategySignal(
        strategy_id=sid,
        deployment_id=deployment_id,
        version=1,
        bar_time=FAR_BAR,
        rule="always long",
        intent={},
        outcome="skipped",
        reason="the race's bar",
    )


async def _signal_count(session: AsyncSession, deployment_id: int) -> int:
    rows = await session.scalars(
        select(StrategySignal.id).where(
            StrategySignal.deployment_id == deployment_id, StrategySignal.bar_time == FAR_BAR
        )
    )
    return len(rows.all())
