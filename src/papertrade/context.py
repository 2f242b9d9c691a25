"""The process's shared resources, built once at start and reached through the app state."""

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from redis.asyncio import Redis
from sqlalchemy.orm import Session
from starlette.requests import HTTPConnection

from papertrade.auth.credcache import CredentialCache
from papertrade.config import Settings
from papertrade.db import Database, WriterMemory
from papertrade.events import EventBus
from papertrade.kit.breaker import Breaker
from papertrade.kit.clientpool import ClientPool
from papertrade.kit.deployment import namespace
from papertrade.kit.once import SeenOnce
from papertrade.kit.ratelimit import MemoryRateLimiter, RateLimiter, RedisRateLimiter
from papertrade.kit.security import SecretCipher
from papertrade.market.feed import MarketFeed
from papertrade.outbox import store as outbox
from papertrade.uow import AsyncWork, SyncWork, UnitOfWork

T = TypeVar("T")


@dataclass
class AppContext:
    """Settings, database, event bus, cipher, rate limiter, caches; the market attaches at start.

    Infrastructure only: the engine, the order writer and the WebSocket service are parts of the
    app (app.state), and services are handed what they need, never this object.
    """

    settings: Settings
    db: Database
    cipher: SecretCipher
    limiter: RateLimiter
    credentials: CredentialCache
    replays: SeenOnce  # signatures of signed /fapi writes already received
    redis: Redis | None = None
    events: EventBus = field(default_factory=EventBus)
    market: MarketFeed | None = None
    exchanges: ClientPool = field(default_factory=ClientPool)  # live accounts' (live/clients.py)
    # Set when a commit here wrote to the outbox (outbox/dispatcher.py waits on it).
    outbox_written: asyncio.Event = field(default_factory=asyncio.Event)

    @classmethod
    def build(cls, settings: Settings) -> "AppContext":
        # Timeouts: a Redis that hangs must fail like one that is down (callers fall back), and
        # the breaker then skips it for a second instead of every request waiting.
        redis = (
            Redis.from_url(settings.redis_url, socket_connect_timeout=2, socket_timeout=3)
            if settings.redis_url
            else None
        )
        breaker = Breaker()
        limiter: RateLimiter = (
            RedisRateLimiter(redis, namespace(settings.database_url), breaker)
            if redis
            else MemoryRateLimiter()
        )
        credentials = CredentialCache(redis, breaker)
        ctx = cls(
            settings=settings,
            db=Database(
                settings.database_url,
                settings.database_pool_size,
                settings.database_max_overflow,
            ),
            cipher=SecretCipher(settings.resolved_secret_key()),
            limiter=limiter,
            redis=redis,
            credentials=credentials,
            replays=SeenOnce(redis, "pt:fapi:sig:", breaker),
        )
        ctx.events.subscribe(credentials.on_events)
        return ctx

    @asynccontextmanager
    async def transaction(
        self, *, keeps_writer_memory: bool | Callable[[], bool] = False
    ) -> AsyncIterator[AsyncWork]:
        """A unit of work; after it commits, its events are published (then the caller goes on).
        `keeps_writer_memory`: see Database.unit_of_work."""
        async with self.db.unit_of_work(keeps_writer_memory=keeps_writer_memory) as session:
            uow = UnitOfWork(session)
            yield uow
            await session.run_sync(self._before_commit, uow)
        await self._committed(uow)

    async def run_unit(self, work: Callable[[SyncWork], T], *, remember: bool = False) -> T:
        """Run the synchronous `work` as one unit of work (see Database.run_unit), then publish
        its events as above."""
        units: list[SyncWork] = []

        def run(session: Session, memory: WriterMemory | None) -> T:
            uow = UnitOfWork(session, memory)
            units.append(uow)
            result = work(uow)
            self._before_commit(session, uow)
            return result

        result = await self.db.run_unit(run, remember=remember)
        await self._committed(units[0])
        return result

    @staticmethod
    def _before_commit(session: Session, uow: UnitOfWork[Any]) -> None:
        uow.before_commit(session)  # the bulk rows
        outbox.write(session, uow.events)  # last: its lock is held only to the commit

    async def _committed(self, uow: UnitOfWork[Any]) -> None:
        if any(event.is_durable() for event in uow.events):
            self.outbox_written.set()  # the dispatcher need not wait for its next poll
        await self.events.publish(uow.events)

    async def close(self) -> None:
        await self.exchanges.close()
        await self.db.dispose()
        if self.redis is not None:
            await self.redis.aclose()


async def get_context(conn: HTTPConnection) -> AppContext:
    """The AppContext of the running app (a FastAPI dependency; async so it runs on the loop)."""
    ctx: AppContext = conn.app.state.ctx
    return ctx
