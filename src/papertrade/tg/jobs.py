"""Telegram's background jobs: processing a received update."""

from papertrade.jobs.declare import queued
from papertrade.jobs.run import JobRun
from papertrade.kit.deployment import namespace
from papertrade.live import telegram as live_telegram
from papertrade.tg import signals, text, updates

SIGNALS_PER_MIN = 7  # per chat (domain rules B2.8, Cornix's own limit)


async def process_update(run: JobRun, update_id: int) -> str:
    ctx = run.ctx
    async with ctx.transaction() as uow:
        result = await updates.process(uow, update_id, ctx.settings.resolved_secret_key())
    if isinstance(result, live_telegram.KillWork):  # a confirmed /kill: the switch, then report
        reply = await live_telegram.fire(ctx, result)
        async with ctx.transaction() as uow:
            return await updates.finish(uow, update_id, result.chat_id, reply, "kill")
    if not isinstance(result, updates.SignalWork):
        return result
    key = f"tg-signals:{namespace(ctx.settings.database_url)}:{result.budget}"
    usage = await ctx.limiter.hit(key, SIGNALS_PER_MIN, 60)
    if usage.allowed:
        reply, outcome = await signals.receive(ctx, result.source, result.body), "signal"
    else:
        reply = (
            f"At most {SIGNALS_PER_MIN} signals a minute; this one was not used. "
            f"Post it again in {usage.retry_after} s."
        )
        outcome = "signal rate limited"
    if result.source.channel is not None:  # the owner reads it in their private chat
        reply = f"In {text.escape(result.source.channel)}: {reply}"
    async with ctx.transaction() as uow:
        return await updates.finish(
            uow, update_id, result.chat_id or None, reply, outcome, result.source.user_id
        )


PROCESS_UPDATE = queued("telegram.process_update", process_update, attempts=3, retry_delay_s=2)
JOBS = (PROCESS_UPDATE,)
