"""listenKeys: one live key per /fapi key pair, 60 minutes without a keepalive.

Kept in this process, or in Redis when PAPERTRADE_REDIS_URL is set, so that a key made on one
process is kept alive, closed and streamed on any other.
"""

import secrets
import string
from dataclasses import dataclass

from redis.asyncio import Redis

from papertrade.kit.deployment import namespace
from papertrade.kit.time import now_ms

ALPHABET = string.ascii_letters + string.digits
KEY_LENGTH = 64


@dataclass(frozen=True, slots=True)
class ListenKey:
    key: str
    key_id: int  # the compat key pair that made it
    portfolio_id: int


def new_key() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(KEY_LENGTH))


def looks_like_key(text: str) -> bool:
    return len(text) == KEY_LENGTH and all(c in ALPHABET for c in text)


class ListenKeys:
    """Issue, keep alive, close and look up listenKeys (memory or Redis)."""

    def __init__(self, redis: Redis | None, database_url: str, ttl_ms: int = 3_600_000):
        self.redis = redis
        self.ttl_ms = ttl_ms
        self.prefix = f"pt:{namespace(database_url)}:fapi:lk"
        self._keys: dict[str, tuple[ListenKey, int]] = {}  # key → (record, expires at)
        self._by_pair: dict[int, str] = {}

    def _live(self, key: str) -> ListenKey | None:
        found = self._keys.get(key)
        if found is None:
            return None
        if found[1] <= now_ms():
            del self._keys[key]
            if self._by_pair.get(found[0].key_id) == key:
                del self._by_pair[found[0].key_id]
            return None
        return found[0]

    async def issue(self, key_id: int, portfolio_id: int) -> str:
        """The key pair's live key (its life extended), or a new one."""
        if self.redis is None:
            current = self._by_pair.get(key_id)
            if current is not None and self._live(current) is not None:
                self._keys[current] = (self._keys[current][0], now_ms() + self.ttl_ms)
                return current
            key = new_key()
            self._keys[key] = (ListenKey(key, key_id, portfolio_id), now_ms() + self.ttl_ms)
            self._by_pair[key_id] = key
            return key
        pair = f"{self.prefix}:pair:{key_id}"
        for _ in range(3):
            raw = await self.redis.get(pair)
            if raw is not None:
                key = raw.decode() if isinstance(raw, bytes) else str(raw)
                if await self.keepalive(key_id, key):
                    return key
                await self.redis.delete(pair)
            key = new_key()
            if await self.redis.set(pair, key, nx=True, px=self.ttl_ms):
                await self.redis.set(
                    f"{self.prefix}:{key}", f"{key_id}:{portfolio_id}", px=self.ttl_ms
                )
                return key
        raise RuntimeError("could not issue a listenKey")

    async def issue_peek(self, key_id: int) -> str | None:
        """The key pair's live key, if any (not extended)."""
        if self.redis is None:
            current = self._by_pair.get(key_id)
            return current if current is not None and self._live(current) is not None else None
        raw = await self.redis.get(f"{self.prefix}:pair:{key_id}")
        if raw is None:
            return None
        return raw.decode() if isinstance(raw, bytes) else str(raw)

    async def keepalive(self, key_id: int, key: str) -> bool:
        """Extend a live key of this key pair by the full life; False when it does not exist."""
        found = await self.lookup(key)
        if found is None or found.key_id != key_id:
            return False
        if self.redis is None:
            self._keys[key] = (found, now_ms() + self.ttl_ms)
            return True
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.pexpire(f"{self.prefix}:{key}", self.ttl_ms)
            pipe.pexpire(f"{self.prefix}:pair:{key_id}", self.ttl_ms)
            done = await pipe.execute()
        return bool(done[0])

    async def close(self, key_id: int, key: str) -> bool:
        """Delete a live key of this key pair; False when it does not exist."""
        found = await self.lookup(key)
        if found is None or found.key_id != key_id:
            return False
        await self.forget(found)
        return True

    async def forget(self, found: ListenKey) -> None:
        if self.redis is None:
            self._keys.pop(found.key, None)
            if self._by_pair.get(found.key_id) == found.key:
                del self._by_pair[found.key_id]
            return
        await self.redis.delete(f"{self.prefix}:{found.key}", f"{self.prefix}:pair:{found.key_id}")

    async def lookup(self, key: str) -> ListenKey | None:
        if not looks_like_key(key):
            return None
        if self.redis is None:
            return self._live(key)
        raw = await self.redis.get(f"{self.prefix}:{key}")
        return _parse(key, raw)

    async def alive(self, keys: list[str]) -> set[str]:
        """Which of `keys` still exist (one round trip with Redis)."""
        if not keys:
            return set()
        if self.redis is None:
            return {k for k in keys if self._live(k) is not None}
        values = await self.redis.mget([f"{self.prefix}:{k}" for k in keys])
        return {k for k, v in zip(keys, values, strict=True) if v is not None}


def _parse(key: str, raw: object) -> ListenKey | None:
    if raw is None:
        return None
    text = raw.decode() if isinstance(raw, bytes) else str(raw)
    key_id, _, portfolio_id = text.partition(":")
    return ListenKey(key, int(key_id), int(portfolio_id))
