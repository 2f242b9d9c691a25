"""Binance's WebSocket API (`/ws-fapi/v1`): signed requests by frame, answered by the REST
endpoints' own handlers; driven raw and through ccxt.pro's `*_ws` calls."""

import asyncio
import hashlib
import hmac
import time
import warnings
from typing import Any

import ccxt.pro
import orjson
import pytest
from fastapi import FastAPI

from tests.fapi.clients import ccxt_config
from tests.fapi.helpers import Bot
from tests.fapi.test_other_clients import python_binance
from tests.fapi.test_streams import opened, recv, ws_base
from tests.trading_api.helpers import positions, set_price

with warnings.catch_warnings():  # python-binance imports deprecated websockets APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    from binance.ws.websocket_api import WebsocketAPI  # type: ignore[import-untyped]


def signed(bot: Bot, **params: Any) -> dict[str, Any]:
    """Params as a client signs them: apiKey and timestamp added, sorted, HMAC over `k=v&…`."""
    values = {"apiKey": bot.api_key, "timestamp": int(time.time() * 1000), **params}
    text = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in values.items()}
    payload = "&".join(f"{k}={v}" for k, v in sorted(text.items()))
    digest = hmac.new(bot.api_secret.encode(), payload.encode(), hashlib.sha256).hexdigest()
    return {**values, "signature": digest}


async def ask(ws: Any, request_id: Any, method: str, params: dict[str, Any]) -> Any:
    await ws.send(orjson.dumps({"id": request_id, "method": method, "params": params}).decode())
    return await recv(ws)


async def test_orders_and_the_account_by_frame(
    app: FastAPI,
    live_url: str,
    live_bot: Bot,
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    async with opened(ws_base(live_url) + "/ws-fapi/v1") as ws:
        market = await ask(
            ws,
            "m1",
            "order.place",
            signed(bot, symbol="BTCUSDT", side="BUY", type="MARKET", quantity="0.010"),
        )
        assert (market["id"], market["status"]) == ("m1", 200), market
        assert market["result"]["status"] == "FILLED"
        assert market["result"]["avgPrice"] == "60000.00"
        weight = {r["rateLimitType"]: r for r in market["rateLimits"]}
        assert weight["REQUEST_WEIGHT"]["count"] >= 1 and weight["ORDERS"]["count"] >= 1

        limit = await ask(
            ws,
            2,
            "order.place",
            signed(
                bot,
                symbol="BTCUSDT",
                side="SELL",
                type="LIMIT",
                quantity="0.010",
                price="65000",
                timeInForce="GTC",
                returnRateLimits=False,
            ),
        )
        assert limit["status"] == 200 and "rateLimits" not in limit
        order_id = limit["result"]["orderId"]
        status = await ask(ws, 3, "order.status", signed(bot, symbol="BTCUSDT", orderId=order_id))
        assert status["result"]["status"] == "NEW"
        listed = await ask(ws, 31, "openOrders.status", signed(bot, symbol="BTCUSDT"))
        assert [o["orderId"] for o in listed["result"]] == [order_id]
        cancelled = await ask(
            ws, 4, "order.cancel", signed(bot, symbol="BTCUSDT", orderId=order_id)
        )
        assert cancelled["result"]["status"] == "CANCELED"

        account = await ask(ws, 5, "v2/account.status", signed(bot))
        assert account["result"]["assets"][0]["asset"] == "USDT"
        held = await ask(ws, 6, "v2/account.position", signed(bot, symbol="BTCUSDT"))
        assert held["result"][0]["positionAmt"] == "0.010"
        book = await ask(ws, 7, "ticker.book", {"symbol": "BTCUSDT"})
        assert book["result"]["symbol"] == "BTCUSDT"
        stream = await ask(ws, 8, "userDataStream.start", {"apiKey": bot.api_key})
        assert len(stream["result"]["listenKey"]) == 64
    assert set(await positions(bot.user, bot.portfolio_id)) == {"BTCUSDT"}


async def test_refusals_are_binances_and_the_socket_stays_open(
    app: FastAPI,
    live_url: str,
    live_bot: Bot,
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    async with opened(ws_base(live_url) + "/ws-fapi/v1") as ws:
        forged = signed(bot, symbol="BTCUSDT", side="BUY", type="MARKET", quantity="0.010")
        forged["quantity"] = "1.000"  # after signing
        refused = await ask(ws, "f", "order.place", forged)
        assert (refused["status"], refused["error"]["code"]) == (400, -1022), refused
        replayed_params = signed(bot, symbol="BTCUSDT", side="BUY", type="MARKET", quantity="0.01")
        first = await ask(ws, "r1", "order.place", replayed_params)
        again = await ask(ws, "r2", "order.place", replayed_params)
        assert first["status"] == 200 and again["error"]["code"] == -1021
        unsigned = await ask(ws, "u", "account.status", {"apiKey": bot.api_key})
        assert unsigned["error"]["code"] == -1102  # timestamp, then signature, are mandatory
        no_key = await ask(ws, "k", "account.status", {"timestamp": 1})
        assert (no_key["status"], no_key["error"]["code"]) == (401, -2014)
        modify = await ask(ws, "x", "order.modify", signed(bot, symbol="BTCUSDT", orderId=1))
        assert modify["error"]["code"] == -1020
        unknown = await ask(ws, "y", "session.logon", signed(bot))
        assert unknown == {
            "id": "y",
            "status": 400,
            "error": {"code": -1020, "msg": "This operation is not supported. (session.logon)"},
        }
        await ws.send("{not json")
        assert (await recv(ws))["error"]["code"] == -1100
        nested = await ask(ws, None, "order.status", {"symbol": {"a": 1}})
        assert nested["error"]["code"] == -1130
        still = await ask(ws, "z", "ticker.price", {"symbol": "BTCUSDT"})
        assert still["result"]["price"] == "60000.00"
    # one filled order: the forged and the replayed request placed nothing
    [held] = (await positions(bot.user, bot.portfolio_id)).values()
    assert float(held["quantity"]) == pytest.approx(0.01)


async def test_a_burst_of_orders_is_answered_in_order(
    app: FastAPI, live_url: str, live_bot: Bot
) -> None:
    """More frames in a second than a stream connection takes (10): the WebSocket API charges
    each request as REST does and answers every one, in the order sent."""
    await set_price(app, "BTCUSDT", "60000")
    order = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.002"}
    async with opened(ws_base(live_url) + "/ws-fapi/v1") as ws:
        for n in range(15):
            params = signed(live_bot, **order, newClientOrderId=f"burst-{n}")  # as clients do
            frame = {"id": n, "method": "order.place", "params": params}
            await ws.send(orjson.dumps(frame).decode())
        answers = [await recv(ws) for _ in range(15)]
    assert [(a["id"], a["status"]) for a in answers] == [(n, 200) for n in range(15)]
    [held] = (await positions(live_bot.user, live_bot.portfolio_id)).values()
    assert float(held["quantity"]) == pytest.approx(0.03)


async def test_ccxt_pro_orders_over_the_websocket_api(
    app: FastAPI,
    live_url: str,
    live_bot: Bot,
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    config = ccxt_config(live_url, bot.api_key, bot.api_secret)
    config["urls"]["api"]["ws"] = {
        "linear": ws_base(live_url) + "/ws",
        "ws-api": {"linear": ws_base(live_url) + "/ws-fapi/v1"},
    }
    exchange = ccxt.pro.binanceusdm(config)
    try:
        await exchange.load_markets()
        market = await exchange.create_order_ws("BTC/USDT:USDT", "market", "buy", 0.01)
        assert market["status"] == "closed" and market["filled"] == 0.01
        limit = await exchange.create_order_ws("BTC/USDT:USDT", "limit", "buy", 0.01, 50000)
        assert limit["status"] == "open"
        fetched = await exchange.fetch_order_ws(limit["id"], "BTC/USDT:USDT")
        assert fetched["price"] == 50000
        cancelled = await exchange.cancel_order_ws(limit["id"], "BTC/USDT:USDT")
        assert cancelled["status"] == "canceled"
        balance = await exchange.fetch_balance_ws()
        assert balance["USDT"]["total"] == pytest.approx(10000 - 0.3, abs=0.01)  # the taker fee
        held = await exchange.fetch_positions_ws(["BTC/USDT:USDT"])
        assert [(p["symbol"], p["contracts"]) for p in held] == [("BTC/USDT:USDT", 0.01)]
    finally:
        await exchange.close()


async def test_python_binance_orders_over_the_websocket_api(
    app: FastAPI, live_url: str, live_bot: Bot
) -> None:
    await set_price(app, "ETHUSDT", "3000")

    def run() -> dict[str, Any]:
        client = python_binance(live_url, live_bot.api_key, live_bot.api_secret)
        client.ws_future = WebsocketAPI(url=ws_base(live_url) + "/ws-fapi/v1")
        seen: dict[str, Any] = {}
        try:
            seen["order"] = client.ws_futures_create_order(
                symbol="ETHUSDT", side="SELL", type="MARKET", quantity="1"
            )
            seen["queried"] = client.ws_futures_get_order(
                symbol="ETHUSDT", orderId=seen["order"]["orderId"]
            )
            seen["positions"] = client.ws_futures_v2_account_position(symbol="ETHUSDT")
            seen["balance"] = client.ws_futures_account_balance()
            seen["book"] = client.ws_futures_get_order_book_ticker(symbol="ETHUSDT")
        finally:
            client.loop.run_until_complete(client.ws_future.close())
        return seen

    seen = await asyncio.to_thread(run)
    assert seen["order"]["status"] == "FILLED" and seen["order"]["avgPrice"] == "3000.00"
    assert seen["queried"]["orderId"] == seen["order"]["orderId"]
    assert [p["positionAmt"] for p in seen["positions"]] == ["-1.000"]
    assert seen["balance"][0]["asset"] == "USDT"
    assert seen["book"]["symbol"] == "ETHUSDT"
