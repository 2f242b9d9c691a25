"""The process's shared resources, built once at start and reached through the app state."""

from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from starlette.requests import HTTPConnection

from papertrade.config import Settings
from papertrade.db import Database
from papertrade.kit.ratelimit import MemoryRateLimiter, RateLimiter, RedisRateLimiter
from papertrade.kit.security import SecretCipher


@dataclass
class AppContext:
    """Settings, database, cipher, rate limiter; market, engine and hub attach later."""

    settings: Settings
    db: Database
    cipher: SecretCipher
    limiter: RateLimiter
    redis: Redis | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, settings: Settings) -> "AppContext":
        redis = Redis.from_url(settings.redis_url) if settings.redis_url else None
        limiter: RateLimiter = RedisRateLimiter(redis) if redis else MemoryRateLimiter()
        return cls(
            settings=settings,
            db=Database(settings.database_url),
            cipher=SecretCipher(settings.resolved_secret_key()),
            limiter=limiter,
            redis=redis,
        )

    async def close(self) -> None:
        await self.db.dispose()
        if self.redis is not None:
            await self.redis.aclose()


def get_context(conn: HTTPConnection) -> AppContext:
    """The AppContext of the running app (a FastAPI dependency)."""
    ctx: AppContext = conn.app.state.ctx
    return ctx
