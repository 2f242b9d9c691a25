"""Live API keys by token hash, so an authenticated request needs no database read.

Looking a key up cost a pooled connection, a query and a rollback on every request, more than
the rest of a MARKET order. Revocation still takes effect on the very next request: every service
function that revokes a key emits CredentialsRevoked, and once that unit of work has committed,
before its response goes out, the cache is emptied. With Redis configured the
cache also carries a generation number kept in Redis; revoking increments it and every lookup
compares it, so every process forgets revoked keys at once.
"""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from redis.asyncio import Redis

from papertrade.auth.events import CredentialsRevoked
from papertrade.events import DomainEvent

T = TypeVar("T")
GENERATION_KEY = "pt:credentials:generation"
MAX_ENTRIES = 50_000


class CredentialCache:
    def __init__(self, redis: Redis | None):
        self._redis = redis
        self._entries: dict[tuple[str, str], Any] = {}
        self._generation: object = None
        self._epoch = 0  # bumped whenever entries are dropped

    async def get(
        self, kind: str, key_hash: str, load: Callable[[], Awaitable[T | None]]
    ) -> T | None:
        """The cached credential, else `load()`'s answer (a missing key is never cached)."""
        await self._follow_generation()
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

    async def on_events(self, events: Sequence[DomainEvent]) -> None:
        """An event subscriber: empty the caches once a revocation has committed."""
        if any(isinstance(event, CredentialsRevoked) for event in events):
            await self.invalidate()

    async def invalidate(self) -> None:
        """Forget every credential, in this process and (through Redis) in every other."""
        self._forget_all()
        if self._redis is not None:
            self._generation = str(await self._redis.incr(GENERATION_KEY)).encode()

    async def _follow_generation(self) -> None:
        if self._redis is None:
            return
        generation = await self._redis.get(GENERATION_KEY)
        if generation != self._generation:
            self._forget_all()
            self._generation = generation

    def _forget_all(self) -> None:
        self._entries.clear()
        self._epoch += 1
