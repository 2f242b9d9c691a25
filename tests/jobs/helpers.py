"""Reading the jobs table of a running app, waiting for a run, running the command line."""

import asyncio
import os
import sys
from pathlib import Path

import redis.asyncio as redis
from fastapi import FastAPI
from sqlalchemy import select

from papertrade.jobs.broker import queue_name
from papertrade.jobs.runtime import Jobs
from papertrade.models import JobRecord
from tests.jobs import sample_jobs

PAPERTRADE = str(Path(sys.executable).parent / "papertrade")


def environment(var_dir: Path, **settings: str) -> dict[str, str]:
    """This environment without any PAPERTRADE_ setting, plus `settings` (PAPERTRADE_<NAME>)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERTRADE_")}
    env.update(PAPERTRADE_VAR_DIR=str(var_dir), PAPERTRADE_SECRET_KEY="test-secret-key")
    env.update({f"PAPERTRADE_{name.upper()}": value for name, value in settings.items()})
    return env


def jobs_of(app: FastAPI) -> Jobs:
    """The app's job engine, with the test jobs registered."""
    jobs: Jobs = app.state.jobs
    for job in sample_jobs.ALL:
        if jobs.broker.find_task(job.name) is None:
            jobs.add(job)
    return jobs


async def job_row(app: FastAPI, job_id: str) -> JobRecord | None:
    async with app.state.ctx.db.reader() as session:
        row: JobRecord | None = await session.get(JobRecord, job_id)
        return row


async def runs_of(app: FastAPI, name: str) -> list[JobRecord]:
    """Every run of the job `name`, oldest first."""
    async with app.state.ctx.db.reader() as session:
        rows = await session.scalars(
            select(JobRecord).where(JobRecord.name == name).order_by(JobRecord.queued_at)
        )
        return list(rows)


async def _queue(app: FastAPI) -> str:
    """Where a scaled-out run may be stuck, for a failure's message (a retry that never came
    once in a loaded run, cause not found): the stream, its consumer group, the retries waiting
    in Redis and whether this process leads (runs the scheduler)."""
    jobs: Jobs = app.state.jobs
    if not jobs.scale_out:
        return ""
    queue = queue_name(app.state.ctx.settings)
    client = redis.Redis.from_url(str(app.state.ctx.settings.redis_url))
    try:
        groups = await client.xinfo_groups(queue)
        waiting = [key async for key in client.scan_iter(f"{queue}:retries:*")]
        length = await client.xlen(queue)
    except redis.RedisError as exc:
        return f"; Redis: {exc!r}"
    finally:
        await client.aclose()
    scheduler = jobs._leading  # the leader's scheduler task: alive, ended (and how), or none
    state = "none" if scheduler is None else "running" if not scheduler.done() else scheduler
    return (
        f"; stream {length} entries, groups {groups}, retries waiting {waiting},"
        f" engine leader {app.state.engine.active}, scheduler {state}"
    )


async def wait_for_job(
    app: FastAPI, job_id: str, *statuses: str, within: float = 30, seen: list[str] | None = None
) -> JobRecord:
    """Until the run `job_id` has one of `statuses`; every status met on the way goes in `seen`."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        row = await job_row(app, job_id)
        if row is not None:
            if seen is not None and (not seen or seen[-1] != row.status):
                seen.append(row.status)
            if row.status in statuses:
                return row
        if asyncio.get_running_loop().time() > deadline:
            found = None if row is None else (row.status, row.error)
            raise AssertionError(f"job {job_id} is {found}, not {statuses}{await _queue(app)}")
        await asyncio.sleep(0.02)
