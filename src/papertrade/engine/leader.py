"""Exactly one active engine per deployment, elected with a PostgreSQL advisory lock."""

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Protocol

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from papertrade.context import AppContext
from papertrade.engine.engine import Engine
from papertrade.faults.outage import log_failure
from papertrade.kit.tasks import cancel_and_wait

log = logging.getLogger("papertrade.engine.leader")
LOCK_KEY = 0x70617065  # "pape": one lock id for the whole deployment
RETRY_S = 1.0


class LeaderDuty(Protocol):
    """Work besides the engine that only the leader does (the shared market feed's upstream,
    the job scheduler)."""

    async def lead(self) -> None: ...

    async def follow(self) -> None: ...


class Leadership:
    """Starts the engine when this process holds the lock; a standby retries every second.

    The lock lives on one dedicated connection: if the leader process dies, PostgreSQL drops the
    connection and the lock with it, and a standby takes over and rebuilds its books from the
    database. On SQLite (one process by design) the engine simply runs. Each of `duties` leads
    and follows together with the engine (after the engine starts, after it stops).
    """

    def __init__(self, ctx: AppContext, engine: Engine, duties: Sequence[LeaderDuty] = ()):
        self.ctx = ctx
        self.engine = engine
        self.duties = tuple(duties)
        self._task: asyncio.Task[None] | None = None
        self._connection: AsyncConnection | None = None

    @property
    def is_leader(self) -> bool:
        return self.engine.active

    async def start(self) -> None:
        if self.ctx.db.is_sqlite:
            await self._lead()
            return
        first_try = await self._try_acquire()
        if not first_try:
            await self._release()
        self._task = asyncio.create_task(self._campaign(first_try), name="engine-election")
        if first_try:
            # Serve with the books already rebuilt, rather than racing the first requests.
            log.info("this process is the engine leader")
            await self._lead()

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
        await self._stand_by()  # before the lock goes: never two upstream feeds for long
        await self._release()

    async def _lead(self) -> None:
        await self.engine.start()
        for duty in self.duties:
            await duty.lead()

    async def _stand_by(self) -> None:
        await self.engine.stop()
        for duty in self.duties:
            await duty.follow()

    async def _campaign(self, holding: bool) -> None:
        while True:
            try:
                if holding or await self._try_acquire():
                    holding = False
                    if not self.engine.active:
                        log.info("this process is the engine leader")
                        await self._lead()
                    await self._hold()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log_failure(log, "engine election failed; retrying", exc, self.ctx.db.outages)
            if self.engine.active:
                log.warning("engine leadership lost; standing by")
                await self._stand_by()
            await self._release()
            await asyncio.sleep(RETRY_S)

    async def _try_acquire(self) -> bool:
        self._connection = await self.ctx.db.engine.connect()
        acquired = await self._connection.scalar(
            text("SELECT pg_try_advisory_lock(:key)"), {"key": LOCK_KEY}
        )
        await self._connection.commit()
        return bool(acquired)

    async def _hold(self) -> None:
        # Keep the lock's connection alive and notice if it breaks.
        assert self._connection is not None
        while True:
            await asyncio.sleep(RETRY_S)
            await self._connection.execute(text("SELECT 1"))
            await self._connection.commit()

    async def _release(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(Exception):
                # The connection goes back to a pool, so the session (and its lock) lives on.
                await self._connection.execute(text("SELECT pg_advisory_unlock_all()"))
                await self._connection.commit()
            with contextlib.suppress(Exception):
                await self._connection.close()
            self._connection = None
