"""Finished job runs do not pile up: succeeded ones are kept 7 days, failed ones 30."""

import uuid

from fastapi import FastAPI
from sqlalchemy import select

from papertrade.jobs import housekeeping
from papertrade.kit.time import now_ms
from papertrade.models import JobRecord
from tests.jobs.helpers import jobs_of, wait_for_job

DAY_MS = 86_400_000


async def test_old_finished_runs_are_pruned_and_recent_or_unfinished_ones_kept(
    app: FastAPI,
) -> None:
    now = now_ms()
    ages = {  # run → (status, days since it finished, None: not finished)
        "succeeded-8d": ("succeeded", 8),
        "succeeded-6d": ("succeeded", 6),
        "failed-8d": ("failed", 8),
        "failed-31d": ("failed", 31),
        "running-40d": ("running", None),
    }
    tag = uuid.uuid4().hex[:8]
    async with app.state.ctx.transaction() as uow:
        for name, (status, days) in ages.items():
            finished = None if days is None else now - days * DAY_MS
            uow.session.add(
                JobRecord(
                    id=f"{tag}-{name}",
                    name="test.old",
                    status=status,
                    queued_at=now - 40 * DAY_MS,
                    finished_at=finished,
                    updated_at=finished or now,
                )
            )
    run = await jobs_of(app).enqueue(housekeeping.PRUNE)
    done = await wait_for_job(app, run, "succeeded")
    assert done.result["deleted"] >= 2
    async with app.state.ctx.db.reader() as session:
        left = await session.scalars(select(JobRecord.id).where(JobRecord.id.startswith(tag)))
        kept = sorted(row.removeprefix(f"{tag}-") for row in left)
    assert kept == ["failed-8d", "running-40d", "succeeded-6d"]
