"""The inbound framework's job: process one stored event, after its source's earlier ones."""

from papertrade.context import AppContext
from papertrade.inbound import providers, signals, turns
from papertrade.jobs.declare import queued
from papertrade.jobs.run import JobRun
from papertrade.kit.turns import in_arrival_order


async def process_event(run: JobRun, event_id: int) -> str:
    """Process the event; first every earlier event of its source still waiting (their own jobs
    then find them processed), so a source's alerts take effect in the order they arrived."""
    ctx = run.ctx
    source_id = await turns.source_of(ctx, event_id)
    if source_id is None:  # the email provider's events: no order among them matters
        return await _process(ctx, event_id)
    async with turns.source_turn(ctx, source_id):
        earlier = await turns.waiting_before(ctx, source_id, event_id)
        return await in_arrival_order(
            lambda waiting: _process(ctx, waiting), earlier, event_id, "inbound: event"
        )


async def _process(ctx: AppContext, event_id: int) -> str:
    # A Finnhub alert trades first (its own transactions, de-duplicated on the event), then
    # the event is notified and marked processed with what the signal did.
    traded = await signals.trade(ctx, event_id)
    async with ctx.transaction() as uow:
        return await providers.process(uow, event_id, traded)


PROCESS_EVENT = queued("inbound.process", process_event, attempts=5, retry_delay_s=2)
JOBS = (PROCESS_EVENT,)
