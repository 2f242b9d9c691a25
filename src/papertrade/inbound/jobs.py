"""The inbound framework's job: process one stored event."""

from papertrade.inbound import providers
from papertrade.jobs.declare import queued
from papertrade.jobs.run import JobRun


async def process_event(run: JobRun, event_id: int) -> str:
    async with run.ctx.transaction() as uow:
        return await providers.process(uow, event_id)


PROCESS_EVENT = queued("inbound.process", process_event, attempts=5, retry_delay_s=2)
JOBS = (PROCESS_EVENT,)
