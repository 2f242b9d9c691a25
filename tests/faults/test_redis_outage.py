"""Redis dying under two processes that share it: requests keep working (credentials from the
database, rate limits per process), revocation still reaches every process, WebSocket clients
are told to resynchronise, and /healthz says Redis is down."""

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from papertrade.kit import ratelimit
from tests.conftest import bearer, client_for, make_settings, running_app, sign_up
from tests.faults.helpers import redis_server
from tests.faults.proxy import TcpProxy
from tests.liveserver import live_server
from tests.trading_api.helpers import set_price
from tests.ws.conftest import fresh_database
from tests.ws.helpers import socket

# opens databases of its own (tests/databases.py)
pytestmark = pytest.mark.database


@contextlib.contextmanager
def held_clock() -> Iterator[None]:
    """The rate limiter's clock held at now (windows are fixed: 00:00–00:59, …)."""
    now = time.time()
    ratelimit.clock = lambda: now
    try:
        yield
    finally:
        ratelimit.clock = time.time


async def test_requests_revocation_and_websockets_survive_a_redis_crash(tmp_path: Path) -> None:
    async with (
        redis_server() as redis,
        fresh_database(f"redis_outage_{tmp_path.name[-12:]}", tmp_path) as url,
    ):
        settings = make_settings(url, tmp_path, redis_url=redis.url, rate_limit_api_key_per_min=5)
        async with (
            running_app(settings) as one,
            running_app(settings) as two,
            client_for(one) as on_one,
            client_for(two) as on_two,
            live_server(two) as two_url,
        ):
            owner = await sign_up(one)
            pid = (await owner.portfolio())["id"]
            revoked, kept, budgeted = [await owner.api_key() for _ in range(3)]
            keys = (await owner.get("/v1/user/api-keys")).json()
            revoked_id = next(k["id"] for k in keys if revoked.startswith(k["prefix"]))
            # Process two has both keys cached, as a bot's process would.
            for key in (revoked, kept):
                assert (
                    await on_two.get("/v1/portfolios/my", headers=bearer(key))
                ).status_code == 200
            await set_price(one, "BTCUSDT", "60000")
            await set_price(two, "BTCUSDT", "60000")

            async with socket(two_url, kept) as ws:
                await ws.subscribe(f"portfolio:{pid}")
                redis.kill()

                listed = await on_one.get("/v1/portfolios/my", headers=bearer(revoked))
                assert listed.status_code == 200, listed.text
                order: dict[str, Any] = {
                    "portfolio_id": pid,
                    "symbol": "BTCUSDT",
                    "side": "buy",
                    "type": "market",
                    "quantity": "0.01",
                }
                placed = await on_one.post("/v1/order", json=order, headers=bearer(kept))
                assert placed.status_code == 201, placed.text
                gone = await owner.delete(f"/v1/user/api-keys/{revoked_id}")
                assert gone.status_code == 200, gone.text

                health = await on_one.get("/healthz")
                assert health.status_code == 200
                assert (health.json()["redis"], health.json()["status"]) == ("down", "degraded")

                # Budgets fall back to this process's own: the limit still holds. The clock
                # stands still for the count: six requests must not straddle a window's end.
                with held_clock():
                    answers = [
                        (
                            await on_one.get("/v1/portfolios/my", headers=bearer(budgeted))
                        ).status_code
                        for _ in range(6)
                    ]
                assert answers == [200] * 5 + [429]

                # A new WebSocket connection is authenticated from the database.
                async with socket(two_url, kept) as late:
                    assert (await late.subscribe(f"portfolio:{pid}"))["type"] == "subscribed"

                await redis.start()  # back, empty (no persistence)
                # Process two saw no request during the outage: it must not trust its cache.
                refused = await on_two.get("/v1/portfolios/my", headers=bearer(revoked))
                assert refused.status_code == 401, refused.text
                assert (
                    await on_two.get("/v1/portfolios/my", headers=bearer(kept))
                ).status_code == 200
                # The socket on process two missed the fill relayed through Redis: told so.
                told = await ws.wait_for(lambda m: m.get("type") == "resync", within=15)
                assert pid in told["portfolio_ids"]
                # Health says ok again once a ping gets through (the client reconnects with a
                # backoff, and on a busy machine a ping may take longer than its 2 s check).
                deadline = asyncio.get_running_loop().time() + 20
                while True:
                    health = (await on_one.get("/healthz")).json()
                    if (health["redis"], health["status"]) == ("ok", "ok"):
                        break
                    assert asyncio.get_running_loop().time() < deadline, health
                    await asyncio.sleep(0.2)


async def test_a_redis_that_hangs_does_not_hang_requests(tmp_path: Path) -> None:
    async with (
        redis_server() as redis,
        fresh_database(f"redis_hang_{tmp_path.name[-12:]}", tmp_path) as url,
    ):
        proxy = TcpProxy("127.0.0.1", redis.port)
        await proxy.start()
        try:
            settings = make_settings(url, tmp_path, redis_url=f"redis://127.0.0.1:{proxy.port}/0")
            async with running_app(settings) as app, client_for(app) as client:
                owner = await sign_up(app)
                key = await owner.api_key()
                assert (
                    await client.get("/v1/portfolios/my", headers=bearer(key))
                ).status_code == 200

                proxy.freeze()  # Redis accepts and never answers

                # Without timeouts the first request never ends; without the breaker each
                # waits for Redis twice (credentials, budget): ten of them would take a minute.
                async def one_after_another() -> list[int]:
                    return [
                        (await client.get("/v1/portfolios/my", headers=bearer(key))).status_code
                        for _ in range(10)
                    ]

                statuses = await asyncio.wait_for(one_after_another(), timeout=30)
                assert statuses == [200] * 10
                health = await asyncio.wait_for(client.get("/healthz"), timeout=30)
                assert (health.status_code, health.json()["redis"]) == (200, "down")

                proxy.restore()
                assert (
                    await client.get("/v1/portfolios/my", headers=bearer(key))
                ).status_code == 200
        finally:
            await proxy.stop()
