"""Turns in this process: work under one key (a webhook source, a Telegram chat) done one at a
time. SQLite serves one process, so this is all its turns need; on PostgreSQL each caller takes
its turn in the database as well, where other processes see it."""

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Iterable
from contextlib import asynccontextmanager
from typing import TypeVar

log = logging.getLogger("papertrade.turns")
T = TypeVar("T")

# Held only while a key's work runs; a lock nobody holds or waits for goes away with its last
# reference.
_LOCKS: "weakref.WeakValueDictionary[Hashable, asyncio.Lock]" = weakref.WeakValueDictionary()


@asynccontextmanager
async def local_turn(key: Hashable) -> AsyncIterator[None]:
    lock = _LOCKS.get(key)
    if lock is None:
        lock = _LOCKS[key] = asyncio.Lock()
    async with lock:
        yield


async def in_arrival_order(
    process: Callable[[int], Awaitable[T]], earlier: Iterable[int], current: int, what: str
) -> T:
    """Within a key's turn: process its earlier items still waiting (their own jobs then find
    them done), then `current`. An earlier item that fails is left to its own job's retries and
    this one goes on: one bad message must not hold back every message after it."""
    for waiting in earlier:
        try:
            await process(waiting)
        except Exception:
            log.warning("%s %d failed before %d", what, waiting, current, exc_info=True)
    return await process(current)
