"""Delivers the outbox to its consumers: at least once, in commit order, each consumer at its own
pace. Only the engine leader delivers (it is a leader duty, engine/leader.py), and each batch is
handled in one unit of work together with moving the consumer's cursor: the consumer's effects
and "handled up to here" commit together, so a crash at any point neither loses an event nor
repeats an effect.

A round serves every healthy consumer in ONE unit of work: the cursors are read (and locked) with
one statement, the new events are read and parsed once, each consumer handles the part it has
not seen, and the cursors move with one executemany. A consumer's cost per round is then its own
work, not a transaction of its own (BENCHMARKS.md, the order path). If anything in that round
fails, all of it rolls back and the round is delivered to each consumer alone, as before: the
failing one is retried (with a growing pause) from where it stopped and served alone until it
succeeds; the others go on. Events every consumer has passed are deleted once they are older
than RETENTION_MS.
"""

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import cast

from sqlalchemy import Table, bindparam, delete, func, insert, select, update

from papertrade.context import AppContext
from papertrade.faults.outage import log_failure
from papertrade.kit.tasks import cancel_and_wait, cancel_requested, wait_up_to
from papertrade.kit.time import now_ms
from papertrade.models import OutboxCursor, OutboxEvent
from papertrade.outbox.store import StoredEvent, after
from papertrade.uow import AsyncWork

log = logging.getLogger("papertrade.outbox")
BATCH = 500
# After a commit wakes it, the dispatcher waits this long so that one round serves the events
# of many commits: each consumer costs a transaction per round (on SQLite, the one writer), so
# rounds per second, not events per second, must bound the cost (BENCHMARKS.md, outbox).
GATHER_S = 0.05
RETENTION_MS = 7 * 86_400_000
PRUNE_EVERY_S = 600.0
Handler = Callable[[AsyncWork, Sequence[StoredEvent]], Awaitable[None]]
_CURSORS = cast(Table, OutboxCursor.__table__)
_MOVE = (
    update(_CURSORS)
    .where(_CURSORS.c.consumer == bindparam("name"))
    .values(last_id=bindparam("last"))
)


@dataclass(frozen=True, slots=True)
class Consumer:
    """A reader of the outbox. `types`: the event types it wants (None: all). A new consumer
    starts with the events committed after it first runs, unless `from_start`."""

    name: str
    handle: Handler
    types: frozenset[str] | None = None
    from_start: bool = False
    # Writes only its own tables (no portfolio, position or order): its batches leave the SQLite
    # order writer's memory valid (Database.unit_of_work), so the order path keeps its cache.
    own_tables_only: bool = False


class Dispatcher:
    def __init__(
        self, ctx: AppContext, consumers: Sequence[Consumer], *, poll_s: float = 1.0
    ) -> None:
        self.ctx = ctx
        self.consumers = tuple(consumers)
        self.poll_s = poll_s
        self._task: asyncio.Task[None] | None = None
        self._failing: dict[str, tuple[int, float]] = {}  # consumer → (failures, retry at)

    async def lead(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._deliver_forever(), name="outbox-dispatcher")

    async def follow(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)

    async def _deliver(self, consumer: Consumer) -> int:
        work: list[AsyncWork] = []

        def own_tables_only() -> bool:
            """True unless this batch went through the order path or the ledger (their parts):
            a consumer that may place orders (copy trading) but had nothing to copy, and only
            moved its cursor, leaves the SQLite order writer's memory valid."""
            return consumer.own_tables_only or not work[0].wrote_trading_rows()

        async with self.ctx.transaction(keeps_writer_memory=own_tables_only) as uow:
            work.append(uow)
            session = uow.session
            cursor = await session.get(OutboxCursor, consumer.name, with_for_update=True)
            if cursor is None:
                start = 0
                if not consumer.from_start:
                    start = await session.scalar(select(func.max(OutboxEvent.id))) or 0
                cursor = OutboxCursor(consumer=consumer.name, last_id=start)
                session.add(cursor)
            events = await after(session, cursor.last_id, BATCH)
            if not events:
                return 0
            wanted = [e for e in events if consumer.types is None or e.type in consumer.types]
            if wanted:
                await consumer.handle(uow, wanted)
            cursor.last_id = events[-1].id
        return len(events)

    async def _deliver_together(self, consumers: Sequence[Consumer]) -> bool:
        """One batch of events to every consumer of `consumers` in one unit of work; True when
        the batch was full (there may be more)."""
        handled: list[Consumer] = []
        work: list[AsyncWork] = []

        def own_tables_only() -> bool:  # as in _deliver, for every consumer that had events
            return all(c.own_tables_only for c in handled) or not work[0].wrote_trading_rows()

        async with self.ctx.transaction(keeps_writer_memory=own_tables_only) as uow:
            work.append(uow)
            session = uow.session
            names = sorted(c.name for c in consumers)  # locked in name order, as _deliver would
            rows = await session.execute(
                select(_CURSORS.c.consumer, _CURSORS.c.last_id)
                .where(_CURSORS.c.consumer.in_(names))
                .order_by(_CURSORS.c.consumer)
                .with_for_update()
            )
            cursors: dict[str, int] = {row.consumer: row.last_id for row in rows}
            new = [c for c in consumers if c.name not in cursors]
            if new:
                newest = 0
                if not all(c.from_start for c in new):
                    newest = await session.scalar(select(func.max(OutboxEvent.id))) or 0
                for consumer in new:
                    cursors[consumer.name] = 0 if consumer.from_start else newest
                await session.execute(
                    insert(_CURSORS),
                    [{"consumer": c.name, "last_id": cursors[c.name]} for c in new],
                )
            events = await after(session, min(cursors.values()), BATCH)
            if not events:
                return False
            for consumer in consumers:
                seen = cursors[consumer.name]
                wanted = [
                    e
                    for e in events
                    if e.id > seen and (consumer.types is None or e.type in consumer.types)
                ]
                if wanted:
                    handled.append(consumer)
                    await consumer.handle(uow, wanted)
            last = events[-1].id
            moved = [{"name": n, "last": last} for n, seen in cursors.items() if seen < last]
            if moved:  # never empty (the lowest cursor is below `last`), but an empty
                await session.execute(_MOVE, moved)  # executemany would run once, unbound
        return len(events) == BATCH

    async def prune(self) -> int:
        """Delete events older than the retention that every consumer has handled."""
        async with self.ctx.transaction() as uow:
            handled = await uow.session.scalar(select(func.min(OutboxCursor.last_id)))
            horizon = now_ms() - RETENTION_MS
            statement = delete(OutboxEvent).where(OutboxEvent.time < horizon)
            if self.consumers:
                statement = statement.where(OutboxEvent.id <= (handled or 0))
            result = await uow.session.execute(statement)
        return int(getattr(result, "rowcount", 0) or 0)

    async def _deliver_forever(self) -> None:
        written = self.ctx.outbox_written
        last_prune = 0.0
        loop = asyncio.get_running_loop()
        while True:
            written.clear()
            await self._deliver_round(loop.time())
            if loop.time() - last_prune > PRUNE_EVERY_S:
                last_prune = loop.time()
                try:
                    await self.prune()
                except Exception as exc:
                    log_failure(log, "pruning the outbox failed", exc, self.ctx.db.outages)
            if await wait_up_to(written, self.poll_s):  # or a commit elsewhere
                await asyncio.sleep(GATHER_S)

    async def _deliver_round(self, now: float) -> None:
        """Every consumer in good standing together; those that failed lately, each alone."""
        healthy = [c for c in self.consumers if c.name not in self._failing]
        if len(healthy) > 1:
            try:
                while await self._deliver_together(healthy):
                    pass
                healthy = []
            except Exception as exc:
                if cancel_requested():
                    raise
                # Rolled back whole; each consumer alone shows which one fails (and logs it).
                log.debug("a delivery round failed; delivering to each consumer alone: %r", exc)
        for consumer in self.consumers:
            if consumer.name in self._failing or consumer in healthy:
                await self._deliver_safely(consumer, now)

    async def _deliver_safely(self, consumer: Consumer, now: float) -> None:
        failures, retry_at = self._failing.get(consumer.name, (0, 0.0))
        if now < retry_at:
            return
        try:
            while await self._deliver(consumer) == BATCH:
                pass
        except Exception as exc:
            if cancel_requested():
                raise
            pause = min(60.0, 2.0**failures)
            self._failing[consumer.name] = (failures + 1, now + pause)
            what = f"outbox consumer {consumer.name} failed; retrying in {pause:.0f} s"
            log_failure(log, what, exc, self.ctx.db.outages)
            return
        self._failing.pop(consumer.name, None)
