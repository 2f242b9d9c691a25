"""With Redis, an event committed in one process reaches sockets held by another, numbered once."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as redis
from fastapi import FastAPI

from papertrade.kit.deployment import namespace
from tests.conftest import User, client_for, make_settings, running_app, sign_up
from tests.liveserver import live_server
from tests.trading_api.helpers import order, set_price
from tests.ws.conftest import fresh_database
from tests.ws.helpers import socket

# opens databases of its own (tests/databases.py)
pytestmark = pytest.mark.database

REDIS_URL = "redis://127.0.0.1:6379/14"


async def _redis_up() -> bool:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        return bool(await client.ping())
    except (redis.ConnectionError, OSError):
        return False
    finally:
        await client.aclose()


@pytest.fixture(scope="module")
async def two_processes(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[tuple[tuple[FastAPI, str], tuple[FastAPI, str]]]:
    """Two app instances (as two API processes would be) sharing one database and one Redis."""
    if not await _redis_up():
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    tmp = tmp_path_factory.mktemp("ws_redis")
    async with (
        fresh_database("ws_redis", tmp) as url,
        running_app(make_settings(url, tmp, redis_url=REDIS_URL)) as first,
        running_app(make_settings(url, tmp, redis_url=REDIS_URL)) as second,
        live_server(first) as first_url,
        live_server(second) as second_url,
    ):
        yield (first, first_url), (second, second_url)
        await _forget(url)


async def _forget(database_url: str) -> None:
    """Drop this run's keys (sequence counters) from the shared Redis database."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = [k async for k in client.scan_iter(f"pt:{namespace(database_url)}:*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


async def _portfolio_events(ws: Any, count: int) -> list[dict[str, Any]]:
    return [await ws.wait_for(lambda m: "seq" in m, within=5) for _ in range(count)]


async def test_an_order_in_one_process_reaches_a_socket_on_the_other(
    two_processes: tuple[tuple[FastAPI, str], tuple[FastAPI, str]],
) -> None:
    (first, first_url), (second, second_url) = two_processes
    owner: User = await sign_up(second)
    try:
        pid = (await owner.portfolio())["id"]
        key = await owner.api_key()
        # On PostgreSQL the first process leads and runs the market feed; the second waits for it.
        await set_price(first, "BTCUSDT", "50000")
        await set_price(second, "BTCUSDT", "50000")
        async with socket(first_url, key) as on_first, socket(second_url, key) as on_second:
            for ws in (on_first, on_second):
                await ws.subscribe(f"portfolio:{pid}")
            # Through the second process's REST API…
            await order(owner, portfolio_id=pid, symbol="BTCUSDT", side="buy", quantity="0.01")
            # …then through the first's, as another API worker would take the next request.
            async with client_for(first) as client:
                client.cookies.update(owner.client.cookies)
                same_user = User(client, owner.email, owner.password, owner.profile)
                await order(
                    same_user, portfolio_id=pid, symbol="BTCUSDT", side="sell", quantity="0.01"
                )
            seen_first = await _portfolio_events(on_first, 8)
            seen_second = await _portfolio_events(on_second, 8)
        # Both sockets saw the same events, in the same order, with the same numbers.
        assert [(e["seq"], e["type"]) for e in seen_first] == [
            (e["seq"], e["type"]) for e in seen_second
        ]
        seqs = [e["seq"] for e in seen_first]
        assert seqs == list(range(seqs[0], seqs[0] + 8))
        assert [e["type"] for e in seen_first] == [
            "order.new",
            "order.filled",
            "position.changed",
            "balance.changed",
            "order.new",
            "order.filled",
            "position.closed",
            "balance.changed",
        ]
        orders_seq = [e["channel_seq"] for e in seen_first if e["channel"].startswith("orders")]
        assert orders_seq == list(range(orders_seq[0], orders_seq[0] + 4))
    finally:
        await owner.client.aclose()
