"""Two processes sharing the database and Redis (issue 35): a listenKey made on one process is
kept alive and streamed on the other; deleting it or revoking its key pair ends its streams on
both. Two app instances in this test process (on SQLite or PostgreSQL), and two real
`papertrade serve` processes on PostgreSQL."""

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as redis
from fastapi import FastAPI
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from papertrade.kit.deployment import namespace
from tests.conftest import PG_URL, User, make_settings, running_app, sign_up
from tests.databases import from_template
from tests.fapi.helpers import Bot, make_bot
from tests.fapi.test_streams import listed, opened, recv, ws_base
from tests.liveserver import free_port, live_server
from tests.reliability.crashkit import Service
from tests.trading_api.helpers import set_price
from tests.ws.conftest import fresh_database

# opens databases of its own (tests/databases.py)
pytestmark = pytest.mark.database

REDIS_URL = "redis://127.0.0.1:6379/13"
Served = tuple[FastAPI, str]


async def _redis_up() -> bool:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        return bool(await client.ping())
    except (redis.ConnectionError, OSError):
        return False
    finally:
        await client.aclose()


async def _forget(database_url: str) -> None:
    client = redis.Redis.from_url(REDIS_URL)
    try:
        keys = [k async for k in client.scan_iter(f"pt:{namespace(database_url)}:*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


@pytest.fixture(scope="module")
async def two_processes(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[tuple[Served, Served]]:
    """Two app instances (two API processes) on one database and one Redis; revoked key pairs
    are noticed within 0.3 s."""
    if not await _redis_up():
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    tmp = tmp_path_factory.mktemp("fapi_ws_redis")
    async with fresh_database("fapi_ws_redis", tmp) as url:
        settings = make_settings(url, tmp, redis_url=REDIS_URL, fapi_ws_check_s=0.3)
        try:
            async with (
                running_app(settings) as first,
                running_app(settings) as second,
                live_server(first) as first_url,
                live_server(second) as second_url,
            ):
                yield (first, first_url), (second, second_url)
        finally:
            await _forget(url)


async def _batch(ws: ClientConnection) -> list[tuple[str, Any]]:
    """One market order's events, up to its ACCOUNT_UPDATE."""
    seen: list[tuple[str, Any]] = []
    while not seen or seen[-1][0] != "ACCOUNT_UPDATE":
        message = await recv(ws)
        seen.append((message["e"], message.get("o", {}).get("x")))
    return seen


async def _ended(ws: ClientConnection, key: str) -> None:
    """listenKeyExpired for `key`, then the server closes the private socket."""
    message = await recv(ws)
    assert message["e"] == "listenKeyExpired" and message["listenKey"] == key, message
    with pytest.raises(ConnectionClosed):
        await recv(ws)


async def test_a_listen_key_crosses_processes(two_processes: tuple[Served, Served]) -> None:
    (first, first_url), (second, second_url) = two_processes
    owner: User = await sign_up(second)
    async with (
        httpx.AsyncClient(base_url=first_url, timeout=30) as on_first,
        httpx.AsyncClient(base_url=second_url, timeout=30) as on_second,
    ):
        try:
            bot = await make_bot(owner, on_first)
            there = Bot(owner, on_second, bot.portfolio_id, bot.api_key, bot.api_secret)
            header = {"X-MBX-APIKEY": bot.api_key}
            # On PostgreSQL the first process leads and runs the market feed.
            await set_price(first, "BTCUSDT", "60000")
            await set_price(second, "BTCUSDT", "60000")

            # Made on the first process, known to the second: the same key, kept alive there.
            key = (await on_first.post("/fapi/v1/listenKey", headers=header)).json()["listenKey"]
            assert (await on_second.post("/fapi/v1/listenKey", headers=header)).json() == {
                "listenKey": key
            }
            assert (await on_second.put("/fapi/v1/listenKey", headers=header)).json() == {}
            kept = await on_second.put(f"/fapi/v1/listenKey?listenKey={key}", headers=header)
            assert (kept.status_code, kept.json()) == (200, {})

            # Streamed on both; an order through either process reaches both sockets.
            async with (
                opened(f"{ws_base(second_url)}/private/ws?listenKey={key}") as ws_second,
                opened(f"{ws_base(first_url)}/private/stream?listenKey={key}") as ws_first,
            ):
                await listed(ws_second, key)
                await listed(ws_first, key)
                market = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"}
                await bot.ok("POST", "/v1/order", market)
                expected = [
                    ("ORDER_TRADE_UPDATE", "NEW"),
                    ("ORDER_TRADE_UPDATE", "TRADE"),
                    ("TRADE_LITE", None),
                    ("ACCOUNT_UPDATE", None),
                ]
                assert await _batch(ws_second) == expected
                wrapped = await recv(ws_first)
                assert wrapped["stream"] == key and wrapped["data"]["e"] == "ORDER_TRADE_UPDATE"
                await there.ok("POST", "/v1/order", market | {"side": "SELL"})
                assert await _batch(ws_second) == expected
                await there.ok("POST", "/v1/leverage", {"symbol": "BTCUSDT", "leverage": 5})
                config = await _until(ws_second, "ACCOUNT_CONFIG_UPDATE")
                assert config["ac"] == {"s": "BTCUSDT", "l": 5}
                wrapped_config = await _until_wrapped(ws_first, "ACCOUNT_CONFIG_UPDATE")
                assert wrapped_config["ac"] == {"s": "BTCUSDT", "l": 5}

                # Deleted on the first process: both streams end at once.
                gone = await on_first.delete("/fapi/v1/listenKey", headers=header)
                assert gone.json() == {}
                await _ended(ws_second, key)
                last = await _until_wrapped(ws_first, "listenKeyExpired")
                assert last["listenKey"] == key
                with pytest.raises(ConnectionClosed):
                    await recv(ws_first)
            refused = await on_second.put(f"/fapi/v1/listenKey?listenKey={key}", headers=header)
            assert refused.json()["code"] == -1125

            # A new key, streamed on both; revoking the key pair ends both streams.
            key = (await on_second.post("/fapi/v1/listenKey", headers=header)).json()["listenKey"]
            async with (
                opened(f"{ws_base(first_url)}/private/ws?listenKey={key}") as ws_first,
                opened(f"{ws_base(second_url)}/ws/{key}") as ws_second,
            ):
                await listed(ws_first, key)
                await listed(ws_second, key)
                keys = (await owner.get(f"/v1/portfolios/{bot.portfolio_id}/api-keys")).json()
                revoked = await owner.delete(
                    f"/v1/portfolios/{bot.portfolio_id}/api-keys/{keys[0]['id']}"
                )
                assert revoked.status_code in (200, 204)
                await _ended(ws_first, key)
                expired = await recv(ws_second)  # a legacy /ws socket stays open, silent
                assert expired["e"] == "listenKeyExpired" and expired["listenKey"] == key
            assert (await on_first.post("/fapi/v1/listenKey", headers=header)).json()[
                "code"
            ] == -2015
        finally:
            await owner.client.aclose()


async def _until(ws: ClientConnection, event: str) -> dict[str, Any]:
    async with asyncio.timeout(5):
        while True:
            message = await recv(ws)
            if message["e"] == event:
                return dict(message)


async def _until_wrapped(ws: ClientConnection, event: str) -> dict[str, Any]:
    async with asyncio.timeout(5):
        while True:
            message = await recv(ws)
            if message["data"]["e"] == event:
                return dict(message["data"])


async def test_a_put_on_one_process_keeps_the_stream_on_the_other_alive(
    two_processes: tuple[Served, Served],
) -> None:
    """With a 1.5 s key life: PUTs on the first process keep a stream on the second going past
    that life; without them the key lapses and the second process ends the stream."""
    (first, first_url), (second, second_url) = two_processes
    owner: User = await sign_up(first)
    services = [first.state.binance_streams, second.state.binance_streams]
    lives = [s.keys.ttl_ms for s in services]
    async with httpx.AsyncClient(base_url=first_url, timeout=30) as on_first:
        try:
            for service in services:
                service.keys.ttl_ms = 1500
            bot = await make_bot(owner, on_first)
            header = {"X-MBX-APIKEY": bot.api_key}
            await set_price(first, "BTCUSDT", "60000")
            await set_price(second, "BTCUSDT", "60000")
            key = (await on_first.post("/fapi/v1/listenKey", headers=header)).json()["listenKey"]
            async with opened(f"{ws_base(second_url)}/private/ws?listenKey={key}") as ws:
                for _ in range(6):  # 3 s, twice the key's life
                    await asyncio.sleep(0.5)
                    kept = await on_first.put(f"/fapi/v1/listenKey?listenKey={key}", headers=header)
                    assert kept.json() == {}
                market = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"}
                await bot.ok("POST", "/v1/order", market)
                assert (await recv(ws))["e"] == "ORDER_TRADE_UPDATE"
                async with asyncio.timeout(5):
                    while (message := await recv(ws))["e"] != "listenKeyExpired":
                        pass
                assert message["listenKey"] == key
                with pytest.raises(ConnectionClosed):
                    await recv(ws)
        finally:
            for service, life in zip(services, lives, strict=True):
                service.keys.ttl_ms = life
            await owner.client.aclose()


# -- two `papertrade serve` processes ------------------------------------------------------------

LIFE_S = 3.0  # the listenKeys' life in the served processes (Binance's is 60 minutes)
MARKET = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"}
ONE_ORDER = [
    ("ORDER_TRADE_UPDATE", "NEW"),
    ("ORDER_TRADE_UPDATE", "TRADE"),
    ("TRADE_LITE", None),
    ("ACCOUNT_UPDATE", None),
]


@pytest.fixture
async def two_served(tmp_path: Path) -> AsyncIterator[tuple[Service, Service]]:
    """Two `papertrade serve` processes on one new PostgreSQL database and one Redis; listenKeys
    live LIFE_S without a keepalive, and lapsed or revoked keys are noticed within 0.3 s."""
    if not PG_URL:
        pytest.skip("several `papertrade serve` processes share PostgreSQL only")
    if not await _redis_up():
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    async with fresh_database("fapi_ws_serve", tmp_path) as url:
        await from_template(url)  # the schema, copied (migrating would take each start seconds)
        env = {
            "PAPERTRADE_DATABASE_URL": url,
            "PAPERTRADE_REDIS_URL": REDIS_URL,
            "PAPERTRADE_SECRET_KEY": "test-secret-key",
            "PAPERTRADE_FAPI_LISTEN_KEY_TTL_S": str(LIFE_S),
            "PAPERTRADE_FAPI_WS_CHECK_S": "0.3",
            # PostgreSQL's connections are shared with the rest of the suite
            "PAPERTRADE_DATABASE_POOL_SIZE": "4",
            "PAPERTRADE_DATABASE_MAX_OVERFLOW": "8",
        }
        services = (
            Service(tmp_path / "first", free_port(), env),
            Service(tmp_path / "second", free_port(), env),
        )
        try:
            await asyncio.gather(*(asyncio.to_thread(s.start) for s in services))
            yield services
        finally:
            await asyncio.gather(*(asyncio.to_thread(s.stop) for s in services))
            await _forget(url)


async def _events(ws: ClientConnection, until: str, *, wrapped: bool = False) -> list[Any]:
    """The events up to the first `until`, unwrapped."""
    seen: list[Any] = []
    while not seen or seen[-1]["e"] != until:
        message = await recv(ws)
        seen.append(message["data"] if wrapped else message)
    return seen


def _kinds(events: list[Any]) -> list[tuple[str, Any]]:
    return [(e["e"], e.get("o", {}).get("x")) for e in events]


async def test_two_serve_processes_keep_stream_and_end_a_listen_key(
    two_served: tuple[Service, Service],
) -> None:
    """A listenKey made on the first process is kept alive by PUTs on the second beyond its
    life and streamed on both (an order through the first reaches both sockets after that life);
    a key of another portfolio, not kept alive, lapses on the second meanwhile. Revoking the key
    pair on the first ends the streams on both: listenKeyExpired, then the socket is closed."""
    first, second = two_served
    async with (
        httpx.AsyncClient(base_url=first.url, headers={"Origin": first.url}) as session,
        httpx.AsyncClient(base_url=first.url, timeout=30) as on_first,
        httpx.AsyncClient(base_url=second.url, timeout=30) as on_second,
    ):
        signed_up = await session.post(
            "/v1/auth/signup",
            json={"email": f"serve-{time.time_ns()}@example.com", "password": "s3cret-pass"},
        )
        assert signed_up.status_code == 201, signed_up.text
        owner = User(session, "", "", signed_up.json())
        csrf = {"X-CSRF-Token": session.cookies.get("csrf_token") or ""}

        async def bot() -> tuple[Bot, int]:
            """A portfolio with a /fapi key pair, driven through the first process, and the key
            pair's id."""
            made = await session.post("/v1/portfolios", json={"name": "bot"}, headers=csrf)
            assert made.status_code == 201, made.text
            pid = made.json()["id"]
            pair = await session.post(f"/v1/portfolios/{pid}/api-keys", json={}, headers=csrf)
            assert pair.status_code == 201, pair.text
            body = pair.json()
            return Bot(owner, on_first, pid, body["api_key"], body["api_secret"]), body["id"]

        (kept_bot, pair_id), (idle_bot, _) = await bot(), await bot()
        header = {"X-MBX-APIKEY": kept_bot.api_key}
        made = await on_first.post("/fapi/v1/listenKey", headers=header)
        key = made.json()["listenKey"]
        idle_header = {"X-MBX-APIKEY": idle_bot.api_key}
        idle_key = (await on_first.post("/fapi/v1/listenKey", headers=idle_header)).json()[
            "listenKey"
        ]
        async with (
            opened(f"{ws_base(second.url)}/private/ws?listenKey={key}") as ws_second,
            opened(f"{ws_base(first.url)}/private/stream?listenKey={key}") as ws_first,
            opened(f"{ws_base(second.url)}/private/ws?listenKey={idle_key}") as ws_idle,
        ):
            for ws, streamed in ((ws_second, key), (ws_first, key), (ws_idle, idle_key)):
                await listed(ws, streamed)
            # Kept alive on the second process for one and a half lives.
            for _ in range(6):
                kept = await on_second.put(f"/fapi/v1/listenKey?listenKey={key}", headers=header)
                assert (kept.status_code, kept.json()) == (200, {})
                await asyncio.sleep(LIFE_S / 4)
            # The other portfolio's key was not: the second process ended its stream.
            lapsed = await recv(ws_idle)
            assert (lapsed["e"], lapsed["listenKey"]) == ("listenKeyExpired", idle_key)
            with pytest.raises(ConnectionClosed):
                await recv(ws_idle)

            # Still streamed on both, past its life: an order through the first process.
            placed = await kept_bot.ok("POST", "/v1/order", MARKET)
            on_second_events = await _events(ws_second, "ACCOUNT_UPDATE")
            assert _kinds(on_second_events) == ONE_ORDER
            assert on_second_events[0]["o"]["i"] == placed["orderId"]
            assert _kinds(await _events(ws_first, "ACCOUNT_UPDATE", wrapped=True)) == ONE_ORDER
            assert (await on_second.put("/fapi/v1/listenKey", headers=header)).json() == {}

            # Revoking the key pair on the first process ends the streams on both.
            revoked = await session.delete(
                f"/v1/portfolios/{kept_bot.portfolio_id}/api-keys/{pair_id}", headers=csrf
            )
            assert revoked.status_code in (200, 204), revoked.text
            await _ended(ws_second, key)
            last = await recv(ws_first)
            assert last == {"stream": key, "data": last["data"]}, last
            assert (last["data"]["e"], last["data"]["listenKey"]) == ("listenKeyExpired", key)
            with pytest.raises(ConnectionClosed):
                await recv(ws_first)
        for client in (on_first, on_second):
            refused = await client.post("/fapi/v1/listenKey", headers=header)
            assert refused.json()["code"] == -2015, refused.text
