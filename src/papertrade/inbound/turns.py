"""One event of a source at a time, oldest first: a source's alerts trade in the order they
arrived (a `buy` then a `close` must not close first and buy after), whichever consumer takes
which job and however the jobs interleave."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import select

from papertrade.context import AppContext
from papertrade.kit.turns import local_turn
from papertrade.models import InboundEvent, InboundSource


@asynccontextmanager
async def source_turn(ctx: AppContext, source_id: int) -> AsyncIterator[None]:
    """The source's turn: a lock of this process, which is all SQLite needs; on PostgreSQL then
    also its row, locked in a transaction of its own for as long (`FOR NO KEY UPDATE`: what
    processing writes never waits for it), so processes that share the queue take turns too.
    The process's lock comes first: a burst of one source's alerts waits in memory, not each on
    a pooled connection of its own."""
    async with local_turn(("inbound source", id(ctx.db), source_id)):
        if ctx.db.is_sqlite:
            yield
            return
        async with ctx.db.sessions() as session, session.begin():
            held = select(InboundSource.id).where(InboundSource.id == source_id)
            await session.execute(held.with_for_update(key_share=True))
            yield


async def waiting_before(ctx: AppContext, source_id: int, event_id: int) -> list[int]:
    """The source's events received before `event_id` and not processed yet, oldest first."""
    async with ctx.db.reader() as session:
        rows = await session.scalars(
            select(InboundEvent.id)
            .where(
                InboundEvent.source_id == source_id,
                InboundEvent.id < event_id,
                InboundEvent.processed_at.is_(None),
            )
            .order_by(InboundEvent.id)
        )
        return list(rows)


async def source_of(ctx: AppContext, event_id: int) -> int | None:
    async with ctx.db.reader() as session:
        found: int | None = await session.scalar(
            select(InboundEvent.source_id).where(InboundEvent.id == event_id)
        )
        return found
