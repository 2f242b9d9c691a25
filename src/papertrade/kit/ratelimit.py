"""Fixed-window rate limiting: in-process by default, Redis-backed when several processes share."""

import time
from dataclasses import dataclass
from typing import Protocol

from redis.asyncio import Redis


@dataclass(frozen=True, slots=True)
class Usage:
    allowed: bool
    used: int  # units used in the current window, including this request when allowed
    retry_after: int  # seconds until the window resets


class RateLimiter(Protocol):
    async def hit(self, key: str, limit: int, window_s: int, cost: int = 1) -> Usage: ...

    async def peek(self, key: str, window_s: int) -> int: ...


def _window(window_s: int) -> tuple[int, int]:
    now = time.time()
    start = int(now // window_s) * window_s
    return start, max(1, int(start + window_s - now + 0.999))


class MemoryRateLimiter:
    """Counters in this process only (the embedded single-process mode)."""

    def __init__(self) -> None:
        self._counts: dict[tuple[str, int, int], int] = {}

    async def hit(self, key: str, limit: int, window_s: int, cost: int = 1) -> Usage:
        start, retry_after = _window(window_s)
        slot = (key, window_s, start)
        used = self._counts.get(slot, 0)
        if used + cost > limit:
            return Usage(False, used, retry_after)
        if len(self._counts) > 100_000:
            self._prune()
        self._counts[slot] = used + cost
        return Usage(True, used + cost, retry_after)

    async def peek(self, key: str, window_s: int) -> int:
        start, _ = _window(window_s)
        return self._counts.get((key, window_s, start), 0)

    def _prune(self) -> None:
        now = time.time()
        self._counts = {k: v for k, v in self._counts.items() if k[2] + k[1] > now}


class RedisRateLimiter:
    """Counters in Redis, so every process charges one shared budget per credential."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis

    async def hit(self, key: str, limit: int, window_s: int, cost: int = 1) -> Usage:
        start, retry_after = _window(window_s)
        name = f"pt:rl:{key}:{window_s}:{start}"
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.incrby(name, cost)
            pipe.expire(name, window_s + 1)
            used, _ = await pipe.execute()
        if int(used) > limit:
            await self._redis.decrby(name, cost)
            return Usage(False, int(used) - cost, retry_after)
        return Usage(True, int(used), retry_after)

    async def peek(self, key: str, window_s: int) -> int:
        start, _ = _window(window_s)
        value = await self._redis.get(f"pt:rl:{key}:{window_s}:{start}")
        return int(value or 0)
