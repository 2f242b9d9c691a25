"""Binance-compatible WebSocket streams over real HTTP/WebSocket on loopback (issue 35).

listenKey rules, the user data stream (raw websockets and ccxt.pro), the live subscribe
protocol, market payloads, the depth chain against GET /fapi/v1/depth, and hostile input.
"""

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import ccxt.pro
import httpx
import orjson
import pytest
from fastapi import FastAPI
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from tests.conftest import User
from tests.fapi.clients import ccxt_config
from tests.fapi.helpers import Bot, make_bot
from tests.trading_api.helpers import set_price

SYMBOL = "BTC/USDT:USDT"


def ws_base(live_url: str) -> str:
    return "ws://" + live_url.removeprefix("http://")


def ccxt_pro(live_url: str, bot: Bot) -> Any:
    """ccxt.pro's binanceusdm on the live server, as docs/fapi-ws.md configures it."""
    config = ccxt_config(live_url, bot.api_key, bot.api_secret)
    config["urls"]["api"]["ws"] = {"linear": ws_base(live_url) + "/ws"}
    return ccxt.pro.binanceusdm(config)


@asynccontextmanager
async def opened(url: str) -> AsyncIterator[ClientConnection]:
    async with connect(url, open_timeout=5, close_timeout=1) as ws:
        yield ws


async def recv(ws: ClientConnection, within: float = 15.0) -> Any:
    async with asyncio.timeout(within):
        return orjson.loads(await ws.recv())


async def until(ws: ClientConnection, test: Any, within: float = 15.0) -> Any:
    async with asyncio.timeout(within):
        while True:
            message = orjson.loads(await ws.recv())
            if test(message):
                return message


async def listed(ws: ClientConnection, *names: str) -> None:
    """Until the server streams `names` on this socket. It looks a listenKey up after the
    handshake and answers messages in order, so the answer to LIST_SUBSCRIPTIONS comes after
    that (a client that places an order at once could otherwise miss its events)."""
    await ws.send('{"method": "LIST_SUBSCRIPTIONS", "id": 1}')
    answer = await recv(ws)
    assert answer == {"result": list(names), "id": 1}, answer


async def streaming(app: FastAPI, portfolio_id: int) -> None:
    """Until this process streams the portfolio's user data to a socket: for a client library
    whose socket the test does not hold (the listenKey is looked up after the handshake)."""
    service = app.state.binance_streams
    async with asyncio.timeout(10):
        for _ in itertools.count():
            if service.users.get(portfolio_id):
                return
            await asyncio.sleep(0.01)


async def drained(ws: ClientConnection) -> None:
    """Read until the server closes the connection."""
    with contextlib.suppress(ConnectionClosed):
        while True:
            await ws.recv()


async def listen_key(bot: Bot) -> str:
    response = await bot.client.post(
        "/fapi/v1/listenKey",
        headers={"X-MBX-APIKEY": bot.api_key, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 200, response.text
    return str(response.json()["listenKey"])


# -- listenKey ---------------------------------------------------------------------------------


async def test_listen_key_rules(live_bot: Bot, user: User) -> None:
    bot = live_bot
    first = await listen_key(bot)
    assert len(first) == 64 and await listen_key(bot) == first  # the same key while it lives
    header = {"X-MBX-APIKEY": bot.api_key}
    # PUT: no parameters (ccxt), with listenKey (python-binance), signed (Hummingbot).
    assert (await bot.client.put("/fapi/v1/listenKey", headers=header)).json() == {}
    put = await bot.client.put(f"/fapi/v1/listenKey?listenKey={first}", headers=header)
    assert put.status_code == 200
    assert (await bot.call("PUT", "/v1/listenKey", {"listenKey": first})).status_code == 200
    unknown = await bot.client.put("/fapi/v1/listenKey?listenKey=" + "x" * 64, headers=header)
    assert (unknown.status_code, unknown.json()["code"]) == (400, -1125)
    # Another key pair's listenKey is unknown to this one.
    other = await make_bot(user, bot.client)
    theirs = await other.client.put(
        f"/fapi/v1/listenKey?listenKey={first}", headers={"X-MBX-APIKEY": other.api_key}
    )
    assert theirs.json()["code"] == -1125
    assert await listen_key(other) != first
    # No API key: refused as on Binance; a JSON POST with an empty body (connector) works.
    assert (await bot.client.post("/fapi/v1/listenKey")).json()["code"] == -2014
    json_post = await bot.client.post(
        "/fapi/v1/listenKey", headers={**header, "Content-Type": "application/json"}
    )
    assert json_post.json() == {"listenKey": first}
    gone = await bot.client.delete(f"/fapi/v1/listenKey?listenKey={first}", headers=header)
    assert gone.json() == {}
    assert (await bot.client.put("/fapi/v1/listenKey", headers=header)).json()["code"] == -1125
    assert await listen_key(bot) != first  # a new key after DELETE
    legacy = await bot.client.post("/api/binance/fapi/v1/listenKey", headers=header)
    assert legacy.status_code == 200


# -- user data stream ------------------------------------------------------------------------


async def test_user_stream_order_and_account_events(
    app: FastAPI, live_bot: Bot, live_url: str
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    key = await listen_key(bot)
    async with opened(f"{ws_base(live_url)}/private/ws?listenKey={key}") as ws:
        await listed(ws, key)
        await bot.ok(
            "POST",
            "/v1/order",
            {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"},
        )
        seen: list[dict[str, Any]] = []
        while not any(m["e"] == "ACCOUNT_UPDATE" for m in seen):
            seen.append(await recv(ws))
        kinds = [(m["e"], m.get("o", {}).get("x")) for m in seen]
        assert kinds == [
            ("ORDER_TRADE_UPDATE", "NEW"),
            ("ORDER_TRADE_UPDATE", "TRADE"),
            ("TRADE_LITE", None),
            ("ACCOUNT_UPDATE", None),
        ], kinds
        trade = seen[1]["o"]
        assert (trade["s"], trade["S"], trade["o"], trade["X"], trade["ps"]) == (
            "BTCUSDT",
            "BUY",
            "MARKET",
            "FILLED",
            "BOTH",
        )
        assert (trade["l"], trade["z"], trade["L"], trade["ap"]) == (
            "0.01",
            "0.01",
            "60000",
            "60000",
        )
        assert trade["n"] == "0.3" and trade["N"] == "USDT" and trade["m"] is False
        account = seen[3]["a"]
        assert account["m"] == "ORDER"
        assert account["P"][0]["s"] == "BTCUSDT" and account["P"][0]["pa"] == "0.01"
        assert account["B"][0]["a"] == "USDT"
        stamps = [m["E"] for m in seen]
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)

        # A limit order's cancel, and leverage: ACCOUNT_CONFIG_UPDATE.
        placed = await bot.ok(
            "POST",
            "/v1/order",
            {
                "symbol": "BTCUSDT",
                "side": "BUY",
                "type": "LIMIT",
                "quantity": "0.01",
                "price": "50000",
                "timeInForce": "GTC",
            },
        )
        await bot.ok("DELETE", "/v1/order", {"symbol": "BTCUSDT", "orderId": placed["orderId"]})
        canceled = await until(ws, lambda m: m.get("o", {}).get("x") == "CANCELED")
        assert canceled["o"]["i"] == placed["orderId"] and canceled["o"]["X"] == "CANCELED"
        await bot.ok("POST", "/v1/leverage", {"symbol": "BTCUSDT", "leverage": 7})
        config = await until(ws, lambda m: m["e"] == "ACCOUNT_CONFIG_UPDATE")
        assert config["ac"] == {"s": "BTCUSDT", "l": 7}

        # A conditional order: ALGO_UPDATE NEW.
        await bot.ok(
            "POST",
            "/v1/algoOrder",
            {
                "algoType": "CONDITIONAL",
                "symbol": "BTCUSDT",
                "side": "SELL",
                "type": "STOP_MARKET",
                "quantity": "0.01",
                "triggerPrice": "55000",
            },
        )
        algo = await until(ws, lambda m: m["e"] == "ALGO_UPDATE")
        assert algo["o"]["X"] == "NEW" and algo["o"]["tp"] == "55000" and algo["o"]["ps"] == "BOTH"


async def test_a_fills_trade_id_and_realized_pnl(
    app: FastAPI, live_bot: Bot, live_url: str
) -> None:
    """`t` is the fill's id as GET /fapi/v1/userTrades gives it, `rp` the fill's realized PnL,
    `l`/`L`/`n` the execution's own quantity, price and commission."""
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    key = await listen_key(bot)
    market = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.02"}
    async with opened(f"{ws_base(live_url)}/private/ws?listenKey={key}") as ws:
        await listed(ws, key)
        await bot.ok("POST", "/v1/order", market)
        opened_at = await until(ws, lambda m: m["e"] == "TRADE_LITE")
        await set_price(app, "BTCUSDT", "61000")
        await bot.ok("POST", "/v1/order", market | {"side": "SELL", "quantity": "0.01"})
        closing = await until(ws, lambda m: m.get("o", {}).get("x") == "TRADE")
        lite = await until(ws, lambda m: m["e"] == "TRADE_LITE")
    trades = await bot.ok("GET", "/v1/userTrades", {"symbol": "BTCUSDT"})
    ids = {t["orderId"]: t for t in trades}
    first, second = ids[opened_at["i"]], ids[closing["o"]["i"]]
    assert opened_at["t"] == first["id"] > 0
    assert closing["o"]["t"] == lite["t"] == second["id"] != first["id"]
    assert closing["o"]["rp"] == second["realizedPnl"].rstrip("0").rstrip(".") == "10"
    assert (closing["o"]["l"], closing["o"]["L"]) == ("0.01", "61000")
    assert float(closing["o"]["n"]) == float(second["commission"])


async def test_events_filter_wrapped_stream_and_legacy_forms(
    app: FastAPI, live_bot: Bot, live_url: str
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    key = await listen_key(bot)
    base = ws_base(live_url)
    async with (
        opened(f"{base}/private/stream?listenKey={key}&events=ACCOUNT_UPDATE") as wrapped,
        opened(f"{base}/ws/{key}") as legacy_raw,
        opened(f"{base}/api/binance/stream?streams={key}") as legacy_wrapped,
        opened(f"{base}/ws") as subscriber,
    ):
        await subscriber.send(orjson.dumps({"method": "SUBSCRIBE", "params": [key], "id": 1}))
        assert await recv(subscriber) == {"result": None, "id": 1}
        for ws in (wrapped, legacy_raw, legacy_wrapped):
            await listed(ws, key)
        await bot.ok(
            "POST",
            "/v1/order",
            {"symbol": "BTCUSDT", "side": "SELL", "type": "MARKET", "quantity": "0.01"},
        )
        only = await recv(wrapped)
        assert only["stream"] == key and only["data"]["e"] == "ACCOUNT_UPDATE"  # filtered
        assert (await recv(legacy_raw))["e"] == "ORDER_TRADE_UPDATE"
        first = await recv(legacy_wrapped)
        assert first["stream"] == key and first["data"]["e"] == "ORDER_TRADE_UPDATE"
        assert (await recv(subscriber))["e"] == "ORDER_TRADE_UPDATE"


async def test_delete_revoke_and_unknown_key_end_the_stream(
    app: FastAPI, live_bot: Bot, live_url: str, user: User
) -> None:
    bot = live_bot
    base = ws_base(live_url)
    async with opened(f"{base}/private/ws?listenKey=" + "y" * 64) as nobody:
        with pytest.raises(ConnectionClosed):
            await recv(nobody)
    key = await listen_key(bot)
    async with opened(f"{base}/private/ws?listenKey={key}") as ws:
        await listed(ws, key)
        await bot.client.delete("/fapi/v1/listenKey", headers={"X-MBX-APIKEY": bot.api_key})
        assert await recv(ws) == {
            "e": "listenKeyExpired",
            "E": pytest.approx(0, abs=1e15),
            "listenKey": key,
        }
        with pytest.raises(ConnectionClosed):
            await recv(ws)
    key = await listen_key(bot)
    async with opened(f"{base}/private/ws?listenKey={key}") as ws:
        await listed(ws, key)
        keys = (await user.get(f"/v1/portfolios/{bot.portfolio_id}/api-keys")).json()
        revoked = await user.delete(f"/v1/portfolios/{bot.portfolio_id}/api-keys/{keys[0]['id']}")
        assert revoked.status_code in (200, 204)
        await app.state.binance_streams.check()  # the periodic check (fapi_ws_check_s), now
        assert (await recv(ws))["e"] == "listenKeyExpired"
        with pytest.raises(ConnectionClosed):
            await recv(ws)


# -- market streams and the protocol ----------------------------------------------------------


async def test_subscribe_protocol_and_errors(live_url: str) -> None:
    async with opened(f"{ws_base(live_url)}/market/ws/0") as ws:  # ccxt's path
        send = ws.send
        await send(
            orjson.dumps(
                {
                    "method": "SUBSCRIBE",
                    "params": ["btcusdt@markPrice@1s", "nosuch@stream"],
                    "id": 1,
                }
            )
        )
        assert await recv(ws) == {"result": None, "id": 1}
        await send(orjson.dumps({"method": "LIST_SUBSCRIPTIONS", "id": "x"}))
        assert await recv(ws) == {"result": ["btcusdt@markPrice@1s", "nosuch@stream"], "id": "x"}
        mark = await until(ws, lambda m: m.get("e") == "markPriceUpdate")
        assert mark["s"] == "BTCUSDT" and isinstance(mark["p"], str) and "stream" not in mark
        await send(orjson.dumps({"method": "SET_PROPERTY", "params": ["combined", True], "id": 2}))
        assert (await until(ws, lambda m: m.get("id") == 2)) == {"result": None, "id": 2}
        wrapped = await until(ws, lambda m: "stream" in m)
        assert wrapped["stream"] == "btcusdt@markPrice@1s" and wrapped["data"]["s"] == "BTCUSDT"
        await send(orjson.dumps({"method": "GET_PROPERTY", "params": ["combined"], "id": 3}))
        assert (await until(ws, lambda m: m.get("id") == 3)) == {"result": True, "id": 3}
        await send(
            orjson.dumps({"method": "UNSUBSCRIBE", "params": ["ethusdt@miniTicker"], "id": 4})
        )
        assert (await until(ws, lambda m: m.get("id") == 4)) == {"result": None, "id": 4}
        errors = [
            (b"not json", 3),
            (orjson.dumps({"params": [], "id": 5}), 2),
            (orjson.dumps({"method": "NOPE", "id": 6}), 2),
            (orjson.dumps({"method": "SET_PROPERTY", "params": ["other", True], "id": 7}), 0),
            (orjson.dumps({"method": "SET_PROPERTY", "params": ["combined", 1], "id": 8}), 1),
            (orjson.dumps({"method": "SUBSCRIBE", "params": [1], "id": 9}), 2),
            (orjson.dumps({"method": "SUBSCRIBE", "params": [], "id": -1}), 2),
        ]
        for frame, code in errors:
            await send(frame)
            answer = await until(
                ws, lambda m: "error" in m or (m.get("id") is not None and "result" in m)
            )
            assert answer["error"]["code"] == code, (frame, answer)
            await asyncio.sleep(0.15)  # stay under 10 messages a second
        too_many = [f"s{n}@markPrice" for n in range(1025)]
        await send(orjson.dumps({"method": "SUBSCRIBE", "params": too_many, "id": 10}))
        answer = await until(ws, lambda m: m.get("id") == 10)
        assert answer["error"]["code"] == 2 and "1024" in answer["error"]["msg"]
        await send(orjson.dumps({"method": "GET_PROPERTY", "params": ["combined"], "id": 11}))
        assert (await until(ws, lambda m: m.get("id") == 11))["result"] is True  # still served


async def test_eleven_messages_a_second_disconnect(live_url: str) -> None:
    async with opened(f"{ws_base(live_url)}/ws") as ws:
        for n in range(11):
            await ws.send(orjson.dumps({"method": "LIST_SUBSCRIPTIONS", "id": n}))
        async with asyncio.timeout(5):
            await drained(ws)
        assert ws.close_code == 1008


async def test_market_payloads_and_depth_chain(app: FastAPI, live_url: str) -> None:
    base = ws_base(live_url)
    streams = "/".join(
        [
            "btcusdt@depth@100ms",
            "btcusdt@bookTicker",
            "btcusdt@kline_1m",
            "btcusdt@miniTicker",
            "btcusdt@ticker",
            "!markPrice@arr@1s",
        ]
    )
    async with (
        opened(f"{base}/public/stream?streams={streams}") as ws,
        httpx.AsyncClient(base_url=live_url) as http,
    ):
        got: dict[str, Any] = {}
        depth: list[dict[str, Any]] = []
        snapshot = None
        async with asyncio.timeout(10):
            while len(got) < 6 or len(depth) < 4:
                message = await recv(ws)
                got[message["stream"]] = message["data"]
                if message["stream"] == "btcusdt@depth@100ms":
                    depth.append(message["data"])
                    if snapshot is None:
                        snapshot = (
                            await http.get("/fapi/v1/depth?symbol=BTCUSDT&limit=1000")
                        ).json()
        assert got["btcusdt@kline_1m"]["k"]["i"] == "1m" and got["btcusdt@kline_1m"]["e"] == "kline"
        assert got["btcusdt@miniTicker"]["e"] == "24hrMiniTicker"
        assert got["btcusdt@ticker"]["e"] == "24hrTicker" and "P" in got["btcusdt@ticker"]
        assert got["btcusdt@bookTicker"]["e"] == "bookTicker"
        marks = got["!markPrice@arr@1s"]
        assert isinstance(marks, list) and {m["s"] for m in marks} >= {"BTCUSDT", "ETHUSDT"}
        assert snapshot is not None
        last_id = snapshot["lastUpdateId"]
        # The snapshot may be served after several more updates (a slow request): read the
        # stream on, the way a client syncing a book does, until an event reaches it.
        async with asyncio.timeout(10):
            while depth[-1]["u"] < last_id:
                message = await recv(ws)
                if message["stream"] == "btcusdt@depth@100ms":
                    depth.append(message["data"])
        for before, after in itertools.pairwise(depth):
            assert after["pu"] == before["u"] and after["U"] == before["u"] + 1
        # The snapshot sits on the chain: some event ends at it or starts right after it.
        assert any(e["u"] == last_id or e["pu"] == last_id for e in depth), (last_id, depth)


# -- real clients ------------------------------------------------------------------------------


async def test_ccxt_pro_watch_orders_balance_ticker(
    app: FastAPI, live_bot: Bot, live_url: str
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    config = ccxt_config(live_url, bot.api_key, bot.api_secret)
    config["urls"]["api"]["ws"] = {"linear": ws_base(live_url) + "/ws"}
    exchange = ccxt.pro.binanceusdm(config)
    try:
        await exchange.load_markets()
        ticker = await asyncio.wait_for(exchange.watch_ticker(SYMBOL), 10)
        assert ticker["symbol"] == SYMBOL and ticker["last"] > 0
        orders = asyncio.create_task(exchange.watch_orders(SYMBOL))
        balance = asyncio.create_task(exchange.watch_balance())
        await streaming(app, bot.portfolio_id)  # the listenKey and the private socket
        await exchange.create_order(SYMBOL, "market", "buy", 0.01)
        seen = await asyncio.wait_for(orders, 10)
        assert seen[-1]["symbol"] == SYMBOL and seen[-1]["side"] == "buy"
        got = await asyncio.wait_for(balance, 10)
        assert got["USDT"]["total"] is not None
    finally:
        await exchange.close()
