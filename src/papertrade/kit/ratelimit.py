"""Fixed-window rate limiting: in-process by default, Redis-backed when several processes share."""

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from redis.asyncio import Redis


@dataclass(frozen=True, slots=True)
class Usage:
    allowed: bool
    used: int  # units used in the current window, including this request when allowed
    retry_after: int  # seconds until the window resets


@dataclass(frozen=True, slots=True)
class Charge:
    key: str
    limit: int
    window_s: int
    cost: int = 1


class RateLimiter(Protocol):
    async def hit(self, key: str, limit: int, window_s: int, cost: int = 1) -> Usage: ...

    async def hit_all(self, charges: Sequence[Charge]) -> list[Usage]:
        """Charge each budget in turn, stopping at the first that refuses (it and those after it
        are left uncharged); the usages up to and including the refusal."""
        ...

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

    async def hit_all(self, charges: Sequence[Charge]) -> list[Usage]:
        usages = []
        for charge in charges:
            usage = await self.hit(charge.key, charge.limit, charge.window_s, charge.cost)
            usages.append(usage)
            if not usage.allowed:
                break
        return usages

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
        return (await self.hit_all([Charge(key, limit, window_s, cost)]))[0]

    async def hit_all(self, charges: Sequence[Charge]) -> list[Usage]:
        """All the budgets in one round trip (a signed order charges three)."""
        windows = [_window(charge.window_s) for charge in charges]
        names = [
            f"pt:rl:{charge.key}:{charge.window_s}:{start}"
            for charge, (start, _) in zip(charges, windows, strict=True)
        ]
        async with self._redis.pipeline(transaction=True) as pipe:
            for charge, name in zip(charges, names, strict=True):
                pipe.incrby(name, charge.cost)
                pipe.expire(name, charge.window_s + 1)
            replies = await pipe.execute()
        usages = []
        for n, charge in enumerate(charges):
            used, retry_after = int(replies[2 * n]), windows[n][1]
            if used > charge.limit:
                # Give back this charge and the later ones, as if charged one at a time.
                async with self._redis.pipeline(transaction=True) as pipe:
                    for later, name in zip(charges[n:], names[n:], strict=True):
                        pipe.decrby(name, later.cost)
                    await pipe.execute()
                usages.append(Usage(False, used - charge.cost, retry_after))
                break
            usages.append(Usage(True, used, retry_after))
        return usages

    async def peek(self, key: str, window_s: int) -> int:
        start, _ = _window(window_s)
        value = await self._redis.get(f"pt:rl:{key}:{window_s}:{start}")
        return int(value or 0)
