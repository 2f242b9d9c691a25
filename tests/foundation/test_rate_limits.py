"""Per-credential rate limits, in-process and shared through Redis (foundation point 10)."""

import uuid
from collections.abc import AsyncIterator

import pytest
from fastapi import FastAPI
from redis.asyncio import Redis

from papertrade.config import Settings
from papertrade.kit.ratelimit import Charge, MemoryRateLimiter, RateLimiter, RedisRateLimiter
from tests.conftest import bearer, client_for, running_app, sign_up
from tests.foundation.helpers import REDIS_URL, hold_the_window, with_redis


@pytest.fixture
async def tight_app(settings: Settings) -> AsyncIterator[FastAPI]:
    tight = settings.model_copy(update={"rate_limit_api_key_per_min": 5})
    async with running_app(tight) as app:
        yield app


async def test_each_credential_has_its_own_budget(tight_app: FastAPI) -> None:
    user = await sign_up(tight_app)
    first, second = await user.api_key(), await user.api_key()
    hold_the_window()
    async with client_for(tight_app) as client:
        statuses = [
            (await client.get("/v1/user", headers=bearer(first))).status_code for _ in range(6)
        ]
        assert statuses == [200] * 5 + [429]
        limited = await client.get("/v1/user", headers=bearer(first))
        assert int(limited.headers["retry-after"]) >= 1
        assert limited.json()["error"] == "rate_limited"
        assert (await client.get("/v1/user", headers=bearer(second))).status_code == 200
        assert (await user.get("/v1/user")).status_code == 200  # the session is billed apart
    await user.client.aclose()


async def test_redis_store_shares_one_budget_between_processes(settings: Settings) -> None:
    shared = (await with_redis(settings)).model_copy(update={"rate_limit_api_key_per_min": 4})
    async with running_app(shared) as one, running_app(shared) as two:
        user = await sign_up(one)
        key = await user.api_key()
        hold_the_window()
        async with client_for(one) as a, client_for(two) as b:
            statuses = [
                (await client.get("/v1/user", headers=bearer(key))).status_code
                for client in (a, b, a, b, a)
            ]
        await user.client.aclose()
    assert statuses == [200, 200, 200, 200, 429]


@pytest.mark.parametrize("shared", [False, True], ids=["in-process", "redis"])
async def test_a_refused_charge_leaves_the_later_budgets_untouched(shared: bool) -> None:
    """A signed order charges weight, then the 10-second and 1-minute order counts, in one call;
    an order refused by its 10-second count must not eat into its 1-minute count."""
    redis = Redis.from_url(REDIS_URL) if shared else None
    limiter: RateLimiter = (
        RedisRateLimiter(redis, uuid.uuid4().hex) if redis is not None else MemoryRateLimiter()
    )
    charges = [Charge("weight", 100, 60, 5), Charge("orders", 1, 10), Charge("orders", 50, 60)]
    try:
        hold_the_window()  # the 10-second windows end at the same moments
        first = await limiter.hit_all(charges)
        second = await limiter.hit_all(charges)
        counts = [await limiter.peek(c.key, c.window_s) for c in charges]
    finally:
        if redis is not None:
            await redis.aclose()
    assert [(u.allowed, u.used) for u in first] == [(True, 5), (True, 1), (True, 1)]
    assert [(u.allowed, u.used) for u in second] == [(True, 10), (False, 1)]
    assert second[1].retry_after >= 1
    assert counts == [10, 1, 1]
