"""The process's shared resources, built once at start and reached through the app state."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import HTTPConnection

from papertrade.config import Settings
from papertrade.db import Database
from papertrade.events import Event, EventBus
from papertrade.kit.ratelimit import MemoryRateLimiter, RateLimiter, RedisRateLimiter
from papertrade.kit.security import SecretCipher

if TYPE_CHECKING:
    from papertrade.engine.engine import Engine
    from papertrade.market.feed import MarketFeed


@dataclass
class AppContext:
    """Settings, database, cipher, rate limiter; market, engine and hub attach later."""

    settings: Settings
    db: Database
    cipher: SecretCipher
    limiter: RateLimiter
    redis: Redis | None = None
    events: EventBus = field(default_factory=EventBus)
    market: "MarketFeed | None" = None
    engine: "Engine | None" = None
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

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A unit of work; after it commits, its after-commit actions run and events go out."""
        async with self.db.unit_of_work() as session:
            yield session
            for step in session.info.pop("before_commit", []):
                await step(session)
        for action in session.info.pop("after_commit", []):
            action()
        events: list[Event] = session.info.pop("events", [])
        if events:
            await self.events.publish(events)

    async def close(self) -> None:
        await self.db.dispose()
        if self.redis is not None:
            await self.redis.aclose()


async def get_context(conn: HTTPConnection) -> AppContext:
    """The AppContext of the running app (a FastAPI dependency; async so it runs on the loop)."""
    ctx: AppContext = conn.app.state.ctx
    return ctx
