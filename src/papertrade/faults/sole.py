"""Without Redis, one process per PostgreSQL database; with Redis, any number of them.

Redis is what carries between processes the things a single process keeps in memory: revoked
API keys, rate-limit budgets, the `/fapi` replay guard and the WebSocket fan-out. Two processes
on one database without it would each be right on their own and wrong together (a revoked key
still answering on the other process, fills never reaching a WebSocket client connected to
it). So a process without Redis takes a session-level PostgreSQL advisory lock *exclusively*
and one with Redis takes it *shared*, for its whole life: a second process without Redis, on
this host or another, is refused at start, and so is a process without Redis joining processes
that have it (or the other way round).

The lock belongs to the operating-system process (apps built in one process, as tests do,
share one lock and one answer). If the database restarts, the lock goes with the connection;
it is taken again as soon as the database is back, and if another process took it meanwhile
this one says so in its log and in /healthz until it can take it again.
"""

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from papertrade.kit.tasks import cancel_and_wait

log = logging.getLogger("papertrade.faults")
LOCK_KEY = 0x70617066  # "papf"; the engine leader's lock is "pape"
WATCH_S = 2.0


class SecondProcessRefused(RuntimeError):
    """Another process uses this database in a way this one cannot share."""


def refusal(with_redis: bool) -> str:
    if with_redis:
        return (
            "another process uses this PostgreSQL database without Redis; stop it, or give "
            "every process the same PAPERTRADE_REDIS_URL"
        )
    return (
        "another process already uses this PostgreSQL database; several processes on one "
        "database need Redis: set PAPERTRADE_REDIS_URL (the same for every process)"
    )


@dataclass
class _Holder:
    url: str
    shared: bool
    users: int = 0
    connection: Any = None  # asyncpg.Connection holding the lock
    lost: str | None = None  # why the lock is not held right now
    task: "asyncio.Task[None] | None" = field(default=None, repr=False)
    taking: "asyncio.Future[bool] | None" = field(default=None, repr=False)


_HOLDERS: dict[str, _Holder] = {}  # by database URL: one lock per process and database


def _asyncpg_url(database_url: str) -> str:
    return make_url(database_url).set(drivername="postgresql").render_as_string(hide_password=False)


class SoleProcessGuard:
    """Held from start to stop of a PostgreSQL app; `problem` is None while all is well."""

    def __init__(self, database_url: str, with_redis: bool):
        self.database_url = database_url
        self.with_redis = with_redis
        self._holder: _Holder | None = None

    @property
    def problem(self) -> str | None:
        return self._holder.lost if self._holder is not None else None

    async def start(self) -> None:
        holder = _HOLDERS.get(self.database_url)
        if holder is None:  # registered before any await: apps starting together share it
            holder = _HOLDERS[self.database_url] = _Holder(self.database_url, self.with_redis)
            holder.taking = asyncio.ensure_future(_take(holder))
        assert holder.taking is not None
        try:
            taken = await asyncio.shield(holder.taking)
        except BaseException:
            self._abandon(holder)
            raise
        if not taken:
            self._abandon(holder)
            raise SecondProcessRefused(refusal(self.with_redis))
        if holder.task is None:
            holder.task = asyncio.create_task(_watch(holder), name="sole-process-guard")
        holder.users += 1
        self._holder = holder

    @staticmethod
    def _abandon(holder: _Holder) -> None:
        if holder.users == 0 and _HOLDERS.get(holder.url) is holder:
            del _HOLDERS[holder.url]

    async def stop(self) -> None:
        holder, self._holder = self._holder, None
        if holder is None:
            return
        holder.users -= 1
        if holder.users > 0:
            return
        del _HOLDERS[holder.url]
        if holder.task is not None:
            await cancel_and_wait(holder.task)
        if holder.connection is not None:
            with contextlib.suppress(Exception):
                await holder.connection.close(timeout=2)


async def _take(holder: _Holder) -> bool:
    """Connect and try the lock; True when it is held."""
    connection = await asyncpg.connect(_asyncpg_url(holder.url), timeout=10)
    function = "pg_try_advisory_lock_shared" if holder.shared else "pg_try_advisory_lock"
    try:
        taken = bool(await connection.fetchval(f"SELECT {function}($1)", LOCK_KEY))
    except BaseException:
        connection.terminate()
        raise
    if not taken:
        await connection.close()
        return False
    holder.connection = connection
    return True


async def _watch(holder: _Holder) -> None:
    """Notice a lost lock (the database restarted) and take it again."""
    while True:
        await asyncio.sleep(WATCH_S)
        try:
            if holder.connection is not None and not holder.connection.is_closed():
                await holder.connection.fetchval("SELECT 1", timeout=WATCH_S)
                continue
        except Exception:  # the connection died with the database: the lock is gone
            holder.connection.terminate()
        holder.connection = None
        try:
            taken = await _take(holder)
        except Exception:
            continue  # the database is still away; OutageLog reports that
        if taken:
            if holder.lost is not None:
                log.warning("the single-process lock is held again")
            holder.lost = None
        elif holder.lost is None:
            holder.lost = refusal(holder.shared)
            log.error("lost the single-process lock while the database was away: %s", holder.lost)
