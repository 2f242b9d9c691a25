"""Telegram's background jobs: processing a received update."""

from papertrade.jobs.declare import queued
from papertrade.jobs.run import JobRun
from papertrade.tg import updates


async def process_update(run: JobRun, update_id: int) -> str:
    async with run.ctx.transaction() as uow:
        return await updates.process(uow, update_id)


PROCESS_UPDATE = queued("telegram.process_update", process_update, attempts=3, retry_delay_s=2)
JOBS = (PROCESS_UPDATE,)
