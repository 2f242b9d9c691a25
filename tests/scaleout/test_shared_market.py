"""One market feed per deployment: the engine leader's prices reach every process through Redis."""

import asyncio
from collections.abc import AsyncIterator, Callable
from decimal import Decimal
from typing import Any

import pytest
import redis.asyncio as redis
from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.kit.deployment import namespace
from papertrade.kit.time import now_ms
from papertrade.market import wire
from papertrade.market.replay import ReplayFeed
from papertrade.market.sample import SAMPLE_START_MS
from papertrade.market.shared import SharedFeed
from papertrade.trading.values import Quote
from tests.conftest import PG_URL, bearer, client_for, running_app, sign_up
from tests.trading_api.helpers import limit, set_price, wait_for_status

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="scale-out (several processes, one engine leader) needs PostgreSQL"
)
REDIS_URL = "redis://127.0.0.1:6379/13"


async def _until(condition: Callable[[], object], within: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def feed(app: FastAPI) -> SharedFeed:
    found = app.state.ctx.market
    assert isinstance(found, SharedFeed)
    return found


@pytest.fixture
async def shared_settings(isolated_settings: Settings) -> AsyncIterator[Settings]:
    """Settings of a fresh deployment on PostgreSQL and Redis (its Redis keys dropped after)."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        await client.ping()
    except (redis.ConnectionError, OSError):
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    yield isolated_settings.model_copy(update={"redis_url": REDIS_URL})
    keys = [k async for k in client.scan_iter(f"pt:{namespace(isolated_settings.database_url)}:*")]
    if keys:
        await client.delete(*keys)
    await client.aclose()


async def _market_order(app: FastAPI, key: str, pid: int, symbol: str) -> Any:
    async with client_for(app, headers=bearer(key)) as client:
        body = {"portfolio_id": pid, "symbol": symbol, "side": "buy", "quantity": "0.01"}
        return await client.post("/v1/order", json=body)


async def test_the_leaders_prices_reach_a_follower(shared_settings: Settings) -> None:
    async with running_app(shared_settings) as leader, running_app(shared_settings) as follower:
        assert feed(leader).leading and leader.state.engine.active
        assert not feed(follower).leading and not follower.state.engine.active
        assert not feed(follower).upstream.status()["connected"]  # no second simulation runs
        heard: list[Quote] = []

        async def listen(quote: Quote) -> None:
            heard.append(quote)

        feed(follower).on_tick(listen)  # what the WebSocket channels subscribe to
        await set_price(leader, "BTCUSDT", "61234.5")
        await set_price(follower, "BTCUSDT", "61234.5")  # waits until it arrived
        # Every field of the quote, as the leader published it.
        await _until(lambda: feed(follower).quote("BTCUSDT") == feed(leader).quote("BTCUSDT"))
        assert any(q.symbol == "BTCUSDT" and q.mark_price == Decimal("61234.5") for q in heard)
        assert feed(follower).quotes().keys() == feed(leader).quotes().keys()
        assert feed(follower).instruments() == feed(leader).instruments()

        user = await sign_up(follower)
        pid = (await user.portfolio())["id"]
        key = await user.api_key()
        filled = await _market_order(follower, key, pid, "BTCUSDT")
        assert filled.status_code == 201, filled.text
        assert filled.json()["status"] == "filled" and filled.json()["avg_price"] == 61234.5

        async with client_for(follower) as client:
            status = (await client.get("/v1/market/status")).json()
            klines = await client.get("/v1/market/klines?symbol=BTCUSDT&interval=1m&limit=5")
        assert status["source"] == "sim" and status["simulated"] and status["symbols"] == 26
        assert status["connected"] and not status["stale"], status
        assert "following the sim feed through Redis" in status["detail"]
        assert klines.status_code == 200 and len(klines.json()) == 5
        await user.client.aclose()


async def test_a_standby_takes_over_the_feed_and_publishes(shared_settings: Settings) -> None:
    first_process = running_app(shared_settings)
    first = await first_process.__aenter__()
    first_alive = True
    try:
        async with running_app(shared_settings) as second:
            user = await sign_up(second)
            pid = (await user.portfolio())["id"]
            key = await user.api_key()
            await set_price(first, "BTCUSDT", "60000")
            await set_price(second, "BTCUSDT", "60000")
            resting = await limit(user, pid, "buy", "0.01", "59000")
            await _until(lambda: resting["id"] in first.state.engine.books.book("BTCUSDT"))
            old_origin = feed(first).origin
            first_alive = False
            await first_process.__aexit__(None, None, None)  # the leader goes away

            await _until(lambda: feed(second).leading and second.state.engine.active)
            assert feed(second).upstream.status()["connected"]  # its own simulation now runs
            await set_price(second, "BTCUSDT", "58900")  # the new leader's engine matches it
            done = await wait_for_status(user, resting["id"], "filled")
            assert done["avg_price"] == 59000

            async with running_app(shared_settings) as third:  # a process started afterwards
                assert not feed(third).leading
                await set_price(second, "BTCUSDT", "61000")
                await set_price(third, "BTCUSDT", "61000")
                filled = await _market_order(third, key, pid, "BTCUSDT")
                assert filled.status_code == 201, filled.text
                assert filled.json()["avg_price"] == 61000
                status = third.state.ctx.market.status()
                assert status["role"] == "follower" and not status["stale"]
                assert feed(second).origin in str(status["detail"])

            client = redis.Redis.from_url(REDIS_URL)
            try:
                latest = await client.hget(feed(second).quotes_key, "BTCUSDT")
                assert latest is not None
                assert wire.decode_quote(latest).mark_price == Decimal(61000)
                beat = await client.get(feed(second).heartbeat_key)
                assert beat is not None and feed(second).origin.encode() in beat
                assert old_origin.encode() not in beat
            finally:
                await client.aclose()
            await user.client.aclose()
    finally:
        if first_alive:
            await first_process.__aexit__(None, None, None)


async def test_a_follower_refuses_fills_when_the_shared_prices_stall(
    shared_settings: Settings,
) -> None:
    settings = shared_settings.model_copy(update={"stale_after_ms": 1500})
    async with running_app(settings) as leader, running_app(settings) as follower:
        user = await sign_up(follower)
        pid = (await user.portfolio())["id"]
        key = await user.api_key()
        await set_price(leader, "ETHUSDT", "3000")
        await set_price(follower, "ETHUSDT", "3000")
        assert (await _market_order(follower, key, pid, "ETHUSDT")).status_code == 201

        await feed(leader).upstream.stop()  # the leader still leads, but nothing new is shared

        def too_old() -> bool:
            quote = feed(follower).quote("ETHUSDT")
            return quote is not None and now_ms() - quote.time > 1500

        await _until(too_old, within=5)
        refused = await _market_order(follower, key, pid, "ETHUSDT")
        assert refused.status_code == 503, refused.text
        assert refused.json()["error"] == "market_data_stale"
        # The leader's heartbeat (once a second) tells followers its feed stopped: wait for it
        # as a user watching the status would.
        await _until(lambda: not feed(follower).status()["connected"], within=10)
        async with client_for(follower) as client:
            status = (await client.get("/v1/market/status")).json()
        assert status["stale"] and not status["connected"], status

        await feed(leader).upstream.start()  # prices flow again
        await _until(lambda: not feed(follower).status()["stale"])
        assert (await _market_order(follower, key, pid, "ETHUSDT")).status_code == 201
        await user.client.aclose()


async def test_a_replay_goes_on_where_the_old_leader_was(shared_settings: Settings) -> None:
    settings = shared_settings.model_copy(update={"market_source": "replay", "replay_speed": 60.0})
    first_process = running_app(settings)
    first = await first_process.__aenter__()
    first_alive = True
    try:
        async with running_app(settings) as second:
            played, following = feed(first).upstream, feed(second).upstream
            assert isinstance(played, ReplayFeed) and isinstance(following, ReplayFeed)
            # The follower's history runs on the leader's replay clock (from the heartbeat).
            await _until(lambda: following.checkpoint() == played.checkpoint())
            clock = played.checkpoint()
            first_alive = False
            await first_process.__aexit__(None, None, None)
            await _until(lambda: feed(second).leading)
            assert following.status()["connected"] and following.checkpoint() == clock
            # Same clock, so not started over from the first row (that would be a new clock).
            cursor = following.replay_time()
            assert cursor > SAMPLE_START_MS
            async with client_for(second) as client:
                rows = (await client.get("/v1/market/klines?symbol=BTCUSDT&limit=3")).json()
            # The replay runs on while the request is served (at 60x a loaded second is a
            # minute): the current candle is one the clock was in during the request.
            after = following.replay_time()
            assert rows[-1]["open_time"] <= after and cursor < rows[-1]["close_time"] + 1
    finally:
        if first_alive:
            await first_process.__aexit__(None, None, None)
