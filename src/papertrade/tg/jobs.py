"""Telegram's background jobs: processing a received update."""

from papertrade.jobs.declare import queued
from papertrade.jobs.run import JobRun
from papertrade.kit.deployment import namespace
from papertrade.tg import signals, updates

SIGNALS_PER_MIN = 7  # per chat (domain rules B2.8, Cornix's own limit)


async def process_update(run: JobRun, update_id: int) -> str:
    ctx = run.ctx
    async with ctx.transaction() as uow:
        result = await updates.process(uow, update_id)
    if not isinstance(result, updates.SignalWork):
        return result
    key = f"tg-signals:{namespace(ctx.settings.database_url)}:{result.chat_id}"
    usage = await ctx.limiter.hit(key, SIGNALS_PER_MIN, 60)
    if usage.allowed:
        reply, outcome = await signals.receive(ctx, result.source, result.body), "signal"
    else:
        reply = (
            f"At most {SIGNALS_PER_MIN} signals a minute; this one was not used. "
            f"Post it again in {usage.retry_after} s."
        )
        outcome = "signal rate limited"
    async with ctx.transaction() as uow:
        return await updates.finish(uow, update_id, result.chat_id, reply, outcome)


PROCESS_UPDATE = queued("telegram.process_update", process_update, attempts=3, retry_delay_s=2)
JOBS = (PROCESS_UPDATE,)
