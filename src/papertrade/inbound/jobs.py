"""The inbound framework's job: process one stored event."""

from papertrade.inbound import providers, signals
from papertrade.jobs.declare import queued
from papertrade.jobs.run import JobRun


async def process_event(run: JobRun, event_id: int) -> str:
    # A Finnhub alert trades first (its own transactions, de-duplicated on the event), then
    # the event is notified and marked processed with what the signal did.
    traded = await signals.trade(run.ctx, event_id)
    async with run.ctx.transaction() as uow:
        return await providers.process(uow, event_id, traded)


PROCESS_EVENT = queued("inbound.process", process_event, attempts=5, retry_delay_s=2)
JOBS = (PROCESS_EVENT,)
