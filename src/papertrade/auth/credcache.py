"""Live API keys by token hash, so an authenticated request needs no database read.

Looking a key up cost a pooled connection, a query and a rollback on every request, more than
the rest of a MARKET order. Revocation still takes effect on the very next request: every service
function that revokes a key emits CredentialsRevoked, and once that unit of work has committed,
before its response goes out, the cache is emptied. With Redis configured the
cache also carries a generation number kept in Redis; revoking increments it and every lookup
compares it, so every process forgets revoked keys at once.

A request with a cached API key reads the generation in the same Redis round trip as its
rate-limit charge (unconfirmed/confirm, auth/v1.py), so it costs one round trip, not two.

When Redis cannot be reached the generation cannot be confirmed, so no cached key is trusted:
the cache is emptied and every lookup reads the database until Redis answers again. A
revocation made meanwhile bumps the generation as soon as Redis is back (retried every second),
so the other processes forget what they cached before the outage.
"""

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.exceptions import RedisError

from papertrade.auth.events import CredentialsRevoked
from papertrade.events import DomainEvent
from papertrade.kit.breaker import Breaker

T = TypeVar("T")
GENERATION_KEY = "pt:credentials:generation"
MAX_ENTRIES = 50_000
BUMP_RETRY_S = 1.0


class CredentialCache:
    def __init__(self, redis: Redis | None, breaker: Breaker | None = None):
        self._redis = redis
        self._breaker = breaker or Breaker()
        self._entries: dict[tuple[str, str], Any] = {}
        self._generation: object = None
        self._epoch = 0  # bumped whenever entries are dropped
        self._pending: asyncio.Task[None] | None = None  # a revocation still to tell Redis

    async def get(
        self, kind: str, key_hash: str, load: Callable[[], Awaitable[T | None]]
    ) -> T | None:
        """The cached credential, else `load()`'s answer (a missing key is never cached)."""
        if not await self._follow_generation():
            return await load()  # Redis is away: only the database can confirm a key
        entry: T | None = self._entries.get((kind, key_hash))
        if entry is None:
            epoch = self._epoch
            entry = await load()
            # A revocation that lands while load() reads must not be undone by storing its answer.
            if entry is not None and epoch == self._epoch:
                if len(self._entries) >= MAX_ENTRIES:
                    self._entries.clear()
                self._entries[(kind, key_hash)] = entry
        return entry

    def unconfirmed(self, kind: str, key_hash: str) -> tuple[Any, int] | None:
        """The cached credential before its generation is confirmed: the caller reads the
        generation in the round trip it makes to Redis anyway (the request's rate-limit charge)
        and passes it to confirm() with the epoch given here, which must say yes before the
        credential is used (a revocation in between changes the epoch). None when
        nothing is cached, or the cache needs no Redis (get() is free then), or cannot be
        trusted now (Redis away, our own revocation not yet told)."""
        if self._redis is None or not self._breaker.allows():
            return None
        if self._pending is not None and not self._pending.done():
            return None
        entry = self._entries.get((kind, key_hash))
        return None if entry is None else (entry, self._epoch)

    def confirm(self, generation: bytes | None, epoch: int) -> bool:
        """Whether the entries cached so far still hold, given the generation just read (None:
        it could not be read, or Redis lost it). When not, they are forgotten: get() then reads
        the database and takes up the generation again."""
        if generation is not None and generation == self._generation and epoch == self._epoch:
            return True
        self._forget_all()
        self._generation = None
        return False

    async def on_events(self, events: Sequence[DomainEvent]) -> None:
        """An event subscriber: empty the caches once a revocation has committed."""
        if any(isinstance(event, CredentialsRevoked) for event in events):
            await self.invalidate()

    async def invalidate(self) -> None:
        """Forget every credential, in this process and (through Redis) in every other."""
        self._forget_all()
        if self._redis is None:
            return
        try:
            self._generation = str(await self._redis.incr(GENERATION_KEY)).encode()
        except (RedisError, OSError):
            self._bump_later()

    def _bump_later(self) -> None:
        if self._pending is None or self._pending.done():
            self._pending = asyncio.create_task(self._bump_when_back(), name="credentials-bump")

    async def _bump_when_back(self) -> None:
        assert self._redis is not None
        while True:
            try:
                self._generation = str(await self._redis.incr(GENERATION_KEY)).encode()
                return
            except (RedisError, OSError):
                await asyncio.sleep(BUMP_RETRY_S)

    async def _follow_generation(self) -> bool:
        """False when the generation cannot be read (the cache is then emptied)."""
        if self._redis is None:
            return True
        if not self._breaker.allows():
            self._forget_all()
            self._generation = None
            return False
        try:
            generation = await self._redis.get(GENERATION_KEY)
            if generation is None:
                # A Redis that lost its data (restarted without persistence) starts a new
                # generation nobody has cached under, so every process forgets what it holds.
                await self._redis.set(GENERATION_KEY, secrets.randbelow(1 << 62), nx=True)
                generation = await self._redis.get(GENERATION_KEY)
        except (RedisError, OSError):
            self._breaker.failed()
            self._forget_all()
            self._generation = None
            return False
        if self._pending is not None and not self._pending.done():
            return False  # our own revocation has not reached the others yet
        if generation != self._generation:
            self._forget_all()
            self._generation = generation
        return True

    def _forget_all(self) -> None:
        self._entries.clear()
        self._epoch += 1
