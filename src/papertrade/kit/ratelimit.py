"""Fixed-window rate limiting: in-process by default, Redis-backed when several processes share."""

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from redis.asyncio import Redis
from redis.exceptions import RedisError

from papertrade.kit.breaker import Breaker

log = logging.getLogger("papertrade.ratelimit")
# Where windows fall: the wall clock; a test that counts against a budget holds it still.
clock: Callable[[], float] = time.time


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

    async def hit_all_and_read(
        self, charges: Sequence[Charge], read: str | None
    ) -> tuple[list[Usage], bytes | None]:
        """hit_all, and the value of the shared key `read` in the same round trip (None where
        there is no shared store, or it could not be reached)."""
        ...

    async def peek(self, key: str, window_s: int) -> int: ...

    async def give_back(self, charges: Sequence[Charge], charged_at: float) -> None:
        """Undo charges made at `charged_at` (what a successful sign-in had paid in advance);
        a window that has closed since is left alone."""
        ...


def _window(window_s: int, now: float | None = None) -> tuple[int, int]:
    now = clock() if now is None else now
    start = int(now // window_s) * window_s
    return start, max(1, int(start + window_s - now + 0.999))


def _still_open(window_s: int, charged_at: float) -> int | None:
    """The start of the window `charged_at` fell in, or None when that window has closed."""
    start, _ = _window(window_s, charged_at)
    return start if start + window_s > clock() else None


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

    async def hit_all_and_read(
        self, charges: Sequence[Charge], read: str | None
    ) -> tuple[list[Usage], bytes | None]:
        return await self.hit_all(charges), None

    async def peek(self, key: str, window_s: int) -> int:
        start, _ = _window(window_s)
        return self._counts.get((key, window_s, start), 0)

    async def give_back(self, charges: Sequence[Charge], charged_at: float) -> None:
        for charge in charges:
            start = _still_open(charge.window_s, charged_at)
            slot = (charge.key, charge.window_s, start)
            if start is not None and slot in self._counts:
                self._counts[slot] = max(0, self._counts[slot] - charge.cost)

    def _prune(self) -> None:
        now = clock()
        self._counts = {k: v for k, v in self._counts.items() if k[2] + k[1] > now}


# KEYS: the counters, then (when ARGV[1] is "1") one key to read in the same round trip; then
# ARGV: cost, limit, ttl for each counter. Charges in turn; a charge over its limit is undone
# and ends the charging. Returns each counter's value up to the refused one (its value before
# the charge), then 1 if a charge was refused, else 0, then the value read (nil if absent).
_CHARGE = """
local read = ARGV[1] == '1'
local counters = #KEYS - (read and 1 or 0)
local out, refused = {}, 0
for i = 1, counters do
  local cost, limit = tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
  local now = redis.call('INCRBY', KEYS[i], cost)
  redis.call('EXPIRE', KEYS[i], ARGV[3 * i + 1])
  if now > limit then
    redis.call('DECRBY', KEYS[i], cost)
    out[i], refused = now - cost, 1
    break
  end
  out[i] = now
end
out[#out + 1] = refused
if read then
  out[#out + 1] = redis.call('GET', KEYS[#KEYS])
end
return out
"""


class RedisRateLimiter:
    """Counters in Redis, so every process charges one shared budget per credential.

    `namespace` keeps deployments (and test runs) that share one Redis on budgets of their own:
    credential ids and client addresses repeat between databases.

    While Redis cannot be reached each process charges budgets of its own (the same limits,
    so a client may get up to one budget per process); a request is never refused or failed
    because Redis is away. One warning when Redis goes away, one when it is back."""

    def __init__(self, redis: Redis, namespace: str = "", breaker: Breaker | None = None) -> None:
        self._redis = redis
        self._breaker = breaker or Breaker()
        self._prefix = f"pt:{namespace}:rl:" if namespace else "pt:rl:"
        self._local = MemoryRateLimiter()
        self._charge = redis.register_script(_CHARGE)
        self.redis_down = False

    def _lost(self, exc: Exception) -> None:
        self._breaker.failed()
        if not self.redis_down:
            self.redis_down = True
            log.warning("Redis unreachable (%s): rate limits are per process until it is back", exc)

    def _back(self) -> None:
        if self.redis_down:
            self.redis_down = False
            log.warning("Redis reachable again: rate limits are shared again")

    def _name(self, key: str, window_s: int, start: int) -> str:
        return f"{self._prefix}{key}:{window_s}:{start}"

    async def hit(self, key: str, limit: int, window_s: int, cost: int = 1) -> Usage:
        return (await self.hit_all([Charge(key, limit, window_s, cost)]))[0]

    async def hit_all(self, charges: Sequence[Charge]) -> list[Usage]:
        return (await self.hit_all_and_read(charges, None))[0]

    async def hit_all_and_read(
        self, charges: Sequence[Charge], read: str | None
    ) -> tuple[list[Usage], bytes | None]:
        """hit_all, and the value of the key `read` fetched in the same round trip (None when
        it is absent or Redis could not be reached: the budgets are then this process's)."""
        if not self._breaker.allows():
            return await self._local.hit_all(charges), None
        try:
            usages, value = await self._hit_all(charges, read)
        except (RedisError, OSError) as exc:
            self._lost(exc)
            return await self._local.hit_all(charges), None
        self._back()
        return usages, value

    async def _hit_all(
        self, charges: Sequence[Charge], read: str | None
    ) -> tuple[list[Usage], bytes | None]:
        """All the budgets in one command (a signed order charges three): the script charges
        them in turn and stops at the first that refuses, as the in-process limiter does.
        One EVALSHA costs this process less Python than a MULTI pipeline, and the credential
        cache's generation can ride along (auth/v1.py)."""
        windows = [_window(charge.window_s) for charge in charges]
        keys = [
            self._name(charge.key, charge.window_s, start)
            for charge, (start, _) in zip(charges, windows, strict=True)
        ]
        arguments: list[int | str] = ["1" if read is not None else "0"]
        for charge in charges:
            arguments += (charge.cost, charge.limit, charge.window_s + 1)
        if read is not None:
            keys.append(read)
        replies = await self._charge(keys=keys, args=arguments)
        value = replies.pop() if read is not None else None
        refused = replies.pop()
        last = len(replies) - 1
        usages = [
            Usage(not (refused and n == last), int(used), windows[n][1])
            for n, used in enumerate(replies)
        ]
        return usages, value

    async def peek(self, key: str, window_s: int) -> int:
        start, _ = _window(window_s)
        if not self._breaker.allows():
            return await self._local.peek(key, window_s)
        try:
            value = await self._redis.get(self._name(key, window_s, start))
        except (RedisError, OSError) as exc:
            self._lost(exc)
            return await self._local.peek(key, window_s)
        return int(value or 0)

    async def give_back(self, charges: Sequence[Charge], charged_at: float) -> None:
        if not self._breaker.allows():
            await self._local.give_back(charges, charged_at)
            return
        try:
            await self._give_back(charges, charged_at)
        except (RedisError, OSError) as exc:
            self._lost(exc)
            await self._local.give_back(charges, charged_at)

    async def _give_back(self, charges: Sequence[Charge], charged_at: float) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            for charge in charges:
                start = _still_open(charge.window_s, charged_at)
                if start is not None:
                    name = self._name(charge.key, charge.window_s, start)
                    pipe.decrby(name, charge.cost)
                    pipe.expire(name, charge.window_s + 1)  # never a counter without an end
            await pipe.execute()
