"""Remember keys for a while and tell whether one is new: in this process, or through Redis."""

from redis.asyncio import Redis
from redis.exceptions import RedisError

from papertrade.kit.breaker import Breaker
from papertrade.kit.time import now_ms

MAX_REMEMBERED = 100_000


class SeenOnce:
    """`first_time(key)` is true once per key until its time-to-live has passed; with Redis the
    answer holds across every process of the deployment. While Redis cannot be reached, this
    process remembers on its own (a repeat reaching another process then is not caught)."""

    def __init__(self, redis: Redis | None, prefix: str, breaker: Breaker | None = None):
        self._redis = redis
        self._breaker = breaker or Breaker()
        self._prefix = prefix
        self._seen: dict[str, int] = {}

    async def first_time(self, key: str, ttl_ms: int) -> bool:
        if self._redis is not None and self._breaker.allows():
            try:
                stored = await self._redis.set(self._prefix + key, b"1", px=ttl_ms, nx=True)
            except (RedisError, OSError):
                self._breaker.failed()  # remembered below, in this process
            else:
                return bool(stored)
        now = now_ms()
        if len(self._seen) > MAX_REMEMBERED:
            self._seen = {k: v for k, v in self._seen.items() if v > now}
        if self._seen.get(key, 0) > now:
            return False
        self._seen[key] = now + ttl_ms
        return True
