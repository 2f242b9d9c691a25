"""Telegram's background jobs: processing a received update."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import select, text

from papertrade.context import AppContext
from papertrade.jobs.declare import queued
from papertrade.jobs.run import JobRun
from papertrade.kit.deployment import namespace
from papertrade.kit.turns import in_arrival_order, local_turn
from papertrade.live import telegram as live_telegram
from papertrade.models import TelegramUpdate
from papertrade.tg import signals, updates
from papertrade.tg import text as tg_text

SIGNALS_PER_MIN = 7  # per chat (domain rules B2.8, Cornix's own limit)


# The first key of the two-key PostgreSQL advisory locks that give a chat its turn (a key space
# of its own: the one-key locks elsewhere never meet these); the second is the chat, folded.
_CHAT_TURNS = 0x7467  # "tg"


async def process_update(run: JobRun, update_id: int) -> str:
    """Process the update; first every earlier update of its chat still waiting (their own jobs
    then find them processed), so a chat's signals trade in the order Telegram numbered them:
    a signal then its close must not close first and open after. Jobs run side by side, and
    Telegram itself may deliver several updates at once."""
    ctx = run.ctx
    async with ctx.db.reader() as session:
        chat_id = await session.scalar(
            select(TelegramUpdate.chat_id).where(TelegramUpdate.update_id == update_id)
        )
    if chat_id is None:
        return await _process(ctx, update_id)
    async with _chat_turn(ctx, chat_id):
        async with ctx.db.reader() as session:
            earlier = await updates.waiting_before(session, chat_id, update_id)
        return await in_arrival_order(
            lambda waiting: _process(ctx, waiting), earlier, update_id, "telegram: update"
        )


@asynccontextmanager
async def _chat_turn(ctx: AppContext, chat_id: int) -> AsyncIterator[None]:
    """The chat's turn: a lock of this process, which is all SQLite needs; on PostgreSQL then
    also an advisory lock held by a transaction of its own for as long, so processes that share
    the queue take turns too. The process's lock comes first: a burst of one chat's updates
    waits in memory, not each on a pooled connection of its own. Two chats folded onto one key
    merely take turns."""
    async with local_turn(("telegram chat", id(ctx.db), chat_id)):
        if ctx.db.is_sqlite:
            yield
            return
        folded = (chat_id % 2**32) - 2**31
        async with ctx.db.sessions() as session, session.begin():
            await session.execute(
                text("SELECT pg_advisory_xact_lock(:space, :chat)"),
                {"space": _CHAT_TURNS, "chat": folded},
            )
            yield


async def _process(ctx: AppContext, update_id: int) -> str:
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
        reply = f"In {tg_text.escape(result.source.channel)}: {reply}"
    async with ctx.transaction() as uow:
        return await updates.finish(
            uow, update_id, result.chat_id or None, reply, outcome, result.source.user_id
        )


PROCESS_UPDATE = queued("telegram.process_update", process_update, attempts=3, retry_delay_s=2)
JOBS = (PROCESS_UPDATE,)
