"""For the benchmarks that run the app in their own process: wait until the app has settled."""

import asyncio
from typing import Any

from sqlalchemy import select

from papertrade.jobs.catalogue import JOBS
from papertrade.models import JobRecord


async def scheduled_runs_settled(app: Any, within_s: float = 300) -> None:
    """Until every scheduled job's first run has finished. The scheduler sends each job once as
    soon as the app starts, and a first run landing in a measured window is measured with it:
    the equity snapshots of 1,000 portfolios took more of the event loop than the 10,000
    triggered stops they were measured with (bench_triggers.py, profiled on 2026-11-30)."""
    settings = app.state.ctx.settings
    names = {job.name for job in JOBS if job.every is not None and job.every(settings) > 0}
    finished: set[str] = set()
    async with asyncio.timeout(within_s):
        while not names <= finished:
            async with app.state.ctx.db.reader() as session:
                done = select(JobRecord.name).where(JobRecord.finished_at.is_not(None))
                finished = set(await session.scalars(done))
            await asyncio.sleep(0.05)
