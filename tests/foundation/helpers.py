"""Foundation test helpers: Redis-shared settings, the app over real HTTP, clients from chosen
loopback addresses (Linux routes all of 127.0.0.0/8 to this machine, so each is a distinct
client address to the server)."""

import asyncio
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from redis.asyncio import Redis

from papertrade.config import Settings
from papertrade.kit import ratelimit
from tests.conftest import running_app
from tests.liveserver import live_server

REDIS_URL = os.environ.get("PAPERTRADE_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


async def with_redis(settings: Settings) -> Settings:
    """`settings` sharing Redis. Budgets in Redis are named after the database, so test runs
    on databases of their own never share one."""
    redis = Redis.from_url(REDIS_URL)
    try:
        await redis.ping()
    except Exception:
        pytest.fail(f"Redis is required for this test at {REDIS_URL}")
    finally:
        await redis.aclose()
    return settings.model_copy(update={"redis_url": REDIS_URL})


@asynccontextmanager
async def served(settings: Settings) -> AsyncIterator[str]:
    """The app with `settings`, served over real HTTP; yields its base URL."""
    async with running_app(settings) as app, live_server(app) as url:
        yield url


def client_from(url: str, address: str) -> httpx.AsyncClient:
    """An HTTP client whose connections come from `address` (e.g. 127.0.0.2)."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    return httpx.AsyncClient(base_url=url, transport=transport, timeout=30)


def hold_the_window() -> None:
    """Hold the rate limiter's clock where it is for the rest of the test (tests/conftest.py
    lets it go after each test), so that a test counting against a budget in this process never
    sees its window reset half-way, and never waits for a new one."""
    now = time.time()
    ratelimit.clock = lambda: now


async def fresh_window(window_s: int, need_s: float) -> None:
    """For a service in another process, whose clock a test cannot hold: wait, if need be,
    until `need_s` seconds fit before the limiter's current `window_s` window ends (windows
    start at multiples of their length)."""
    left = window_s - time.time() % window_s
    if left < need_s:
        await asyncio.sleep(left + 0.05)
