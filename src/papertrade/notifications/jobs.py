"""The inbox's background jobs: notifications are kept 90 days."""

from papertrade.jobs.declare import scheduled
from papertrade.jobs.run import JobRun
from papertrade.notifications import service


async def prune_notifications(run: JobRun) -> dict[str, int]:
    async with run.ctx.transaction() as uow:
        return {"deleted": await service.prune(uow)}


PRUNE = scheduled("notifications.prune", prune_notifications, every=lambda settings: 3600)
JOBS = (PRUNE,)
