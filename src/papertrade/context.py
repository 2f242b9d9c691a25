"""The process's shared resources, built once at start and reached through the app state."""

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from redis.asyncio import Redis
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session
from starlette.requests import HTTPConnection

from papertrade.auth.credcache import CredentialCache
from papertrade.config import Settings
from papertrade.db import Database
from papertrade.events import Event, EventBus
from papertrade.kit.deployment import namespace
from papertrade.kit.ratelimit import MemoryRateLimiter, RateLimiter, RedisRateLimiter
from papertrade.kit.security import SecretCipher

T = TypeVar("T")

if TYPE_CHECKING:
    from papertrade.engine.engine import Engine
    from papertrade.market.feed import MarketFeed
    from papertrade.orders.writer import OrderWriter


@dataclass
class AppContext:
    """Settings, database, cipher, rate limiter; market, engine and order writer attach later."""

    settings: Settings
    db: Database
    cipher: SecretCipher
    limiter: RateLimiter
    credentials: CredentialCache
    redis: Redis | None = None
    events: EventBus = field(default_factory=EventBus)
    market: "MarketFeed | None" = None
    engine: "Engine | None" = None
    orders: "OrderWriter | None" = None
    extras: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(cls, settings: Settings) -> "AppContext":
        redis = Redis.from_url(settings.redis_url) if settings.redis_url else None
        limiter: RateLimiter = (
            RedisRateLimiter(redis, namespace(settings.database_url))
            if redis
            else MemoryRateLimiter()
        )
        credentials = CredentialCache(redis)
        db = Database(settings.database_url)
        db.commit_hooks.append(credentials.after_commit)
        return cls(
            settings=settings,
            db=db,
            cipher=SecretCipher(settings.resolved_secret_key()),
            limiter=limiter,
            redis=redis,
            credentials=credentials,
        )

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncSession]:
        """A unit of work; after it commits, its after-commit actions run and events go out."""
        async with self.db.unit_of_work() as session:
            yield session
        await self._committed(session.info)

    async def run_unit(self, work: Callable[[Session], T], *, remember: bool = False) -> T:
        """Run the synchronous `work` as one unit of work (see Database.run_unit), then as above."""
        result, info = await self.db.run_unit(work, remember=remember)
        await self._committed(info)
        return result

    async def _committed(self, info: dict[str, Any]) -> None:
        for action in info.pop("after_commit", []):
            action()
        events: list[Event] = info.pop("events", [])
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
