"""Turns in this process: work under one key (a webhook source, a Telegram chat) done one at a
time. SQLite serves one process, so this is all its turns need; on PostgreSQL each caller takes
its turn in the database as well, where other processes see it."""

import asyncio
import weakref
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager

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
