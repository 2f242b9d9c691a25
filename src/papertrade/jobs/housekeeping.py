"""The jobs table's own upkeep: every run writes a row (a strategy pass every few seconds is
17,000 a day), so finished runs are kept only as long as someone may still look at them."""

from sqlalchemy import delete

from papertrade.jobs.declare import scheduled
from papertrade.jobs.run import JobRun
from papertrade.models import JobRecord

DAY_MS = 86_400_000
KEEP_SUCCEEDED_MS = 7 * DAY_MS
KEEP_FAILED_MS = 30 * DAY_MS  # failures are kept longer: someone may still be looking into one


async def prune_jobs(run: JobRun) -> dict[str, int]:
    async with run.ctx.transaction() as uow:
        now = uow.now()
        deleted = 0
        for status, keep in (("succeeded", KEEP_SUCCEEDED_MS), ("failed", KEEP_FAILED_MS)):
            result = await uow.session.execute(
                delete(JobRecord).where(
                    JobRecord.status == status, JobRecord.finished_at < now - keep
                )
            )
            deleted += int(getattr(result, "rowcount", 0) or 0)
        return {"deleted": deleted}


PRUNE = scheduled("jobs.prune", prune_jobs, every=lambda settings: 3600)
JOBS = (PRUNE,)
