"""The user data stream's mapping of what docs/fapi-ws.md once listed as gaps (issue 35): a
leverage change from any surface is an ACCOUNT_CONFIG_UPDATE, a liquidation reads as Binance's
(`autoclose-…`, LIQUIDATION, CALCULATED), and `f` is the order's own time in force.

Each test subscribes its listenKey with SUBSCRIBE on a plain socket: the acknowledgement comes once
the key is attached, so nothing the test does afterwards can miss the socket."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import orjson
from fastapi import FastAPI
from websockets.asyncio.client import ClientConnection

from tests.conftest import User, bearer, client_for
from tests.copytrading.helpers import follow, leader_and_follower
from tests.fapi.helpers import Bot, make_bot
from tests.fapi.test_streams import listen_key, live_bot, opened, recv, until, ws_base
from tests.trading_api.helpers import market, set_price, until_liquidated
from tests.webhooks.helpers import Hook

__all__ = ["live_bot"]  # the fixture, shared with test_streams.py


@asynccontextmanager
async def user_stream(live_url: str, bot: Bot) -> AsyncIterator[ClientConnection]:
    """The bot's user data on a socket, attached before this yields."""
    key = await listen_key(bot)
    async with opened(f"{ws_base(live_url)}/ws") as ws:
        await ws.send(orjson.dumps({"method": "SUBSCRIBE", "params": [key], "id": 1}))
        assert await recv(ws) == {"result": None, "id": 1}
        yield ws


def config(message: dict[str, Any]) -> bool:
    return bool(message["e"] == "ACCOUNT_CONFIG_UPDATE")


async def test_leverage_from_every_surface_is_an_account_config_update(
    app: FastAPI, live_bot: Bot, live_url: str, user: User
) -> None:
    """The web app (session), the native API (key), a signal and /fapi all set leverage through
    the domain, and each change reaches the stream as Binance's ACCOUNT_CONFIG_UPDATE."""
    bot = live_bot
    pid = bot.portfolio_id
    await set_price(app, "BTCUSDT", "60000")
    async with user_stream(live_url, bot) as ws, client_for(app) as native:
        web = await user.post(
            f"/v1/portfolios/{pid}/leverage", json={"symbol": "BTCUSDT", "leverage": 9}
        )
        assert web.status_code == 200, web.text
        first = await until(ws, config)
        assert set(first) == {"e", "E", "T", "ac"} and first["ac"] == {"s": "BTCUSDT", "l": 9}

        native.headers.update(bearer(await user.api_key()))
        api = await native.post(
            f"/v1/portfolios/{pid}/leverage", json={"symbol": "ETHUSDT", "leverage": 11}
        )
        assert api.status_code == 200, api.text
        second = await until(ws, config)
        assert second["ac"] == {"s": "ETHUSDT", "l": 11} and second["E"] > first["E"]

        # A signal that sets leverage and trades: the setting comes first, as on Binance.
        hook = Hook(app, user, pid, await user.webhook_token(pid))
        await hook.ok({"action": "buy", "symbol": "BTCUSDT", "qty": "0.01", "leverage": 4})
        signal = await recv(ws)
        assert config(signal) and signal["ac"] == {"s": "BTCUSDT", "l": 4}, signal
        assert (await recv(ws))["o"]["x"] == "NEW"

        await bot.ok("POST", "/v1/leverage", {"symbol": "BTCUSDT", "leverage": 6})
        fapi = await until(ws, config)
        assert fapi["ac"] == {"s": "BTCUSDT", "l": 6}


async def test_a_hedge_mode_leverage_change_is_one_update(
    app: FastAPI, live_url: str, user: User
) -> None:
    """Both position sides take the symbol's leverage; Binance announces the symbol once."""
    async with client_for(app) as http:
        bot = await make_bot(user, http)
        await bot.ok("POST", "/v1/positionSide/dual", {"dualSidePosition": "true"})
        path = f"/v1/portfolios/{bot.portfolio_id}/leverage"
        async with user_stream(live_url, bot) as ws:
            for leverage in (3, 5):
                sent = await user.post(path, json={"symbol": "SOLUSDT", "leverage": leverage})
                assert sent.status_code == 200, sent.text
            assert (await recv(ws))["ac"] == {"s": "SOLUSDT", "l": 3}
            assert (await recv(ws))["ac"] == {"s": "SOLUSDT", "l": 5}  # not "3" for each side


async def test_a_liquidation_reads_as_binances(app: FastAPI, live_url: str, user: User) -> None:
    """Binance marks the liquidation engine's order: client order id `autoclose-…`, order type
    LIQUIDATION (`o` and `ot`), IOC, and its execution CALCULATED (no TRADE_LITE)."""
    await set_price(app, "BTCUSDT", "60000")
    async with client_for(app) as http:
        bot = await make_bot(user, http, initial_balance="500")
        await bot.ok("POST", "/v1/leverage", {"symbol": "BTCUSDT", "leverage": 50})
        await bot.ok(
            "POST",
            "/v1/order",
            {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.3"},
        )
        risk = await bot.ok("GET", "/v2/positionRisk", {"symbol": "BTCUSDT"})
        liquidation_price = float(risk[0]["liquidationPrice"])
        assert 58000 < liquidation_price < 60000
        async with user_stream(live_url, bot) as ws:
            await set_price(app, "BTCUSDT", str(int(liquidation_price) - 50))
            await until_liquidated(app, bot.portfolio_id)
            seen: list[dict[str, Any]] = []
            while not seen or seen[-1]["e"] != "ACCOUNT_UPDATE":
                seen.append(await recv(ws))
        forced = await bot.ok("GET", "/v1/forceOrders", {"symbol": "BTCUSDT"})
    kinds = [(m["e"], m.get("o", {}).get("x")) for m in seen]
    assert kinds == [
        ("ORDER_TRADE_UPDATE", "NEW"),
        ("ORDER_TRADE_UPDATE", "CALCULATED"),
        ("ACCOUNT_UPDATE", None),
    ], kinds
    new, calculated = seen[0]["o"], seen[1]["o"]
    for order in (new, calculated):
        assert order["c"].startswith("autoclose-"), order
        assert (order["o"], order["ot"], order["f"], order["S"]) == (
            "LIQUIDATION",
            "LIQUIDATION",
            "IOC",
            "SELL",
        )
    assert new["X"] == "NEW" and new["c"] == calculated["c"] and new["i"] == calculated["i"]
    assert (calculated["X"], calculated["l"], calculated["z"]) == ("FILLED", "0.3", "0.3")
    assert float(calculated["L"]) < 60000 and float(calculated["rp"]) < 0
    assert [o["orderId"] for o in forced] == [calculated["i"]]
    assert seen[2]["a"]["m"] == "ORDER" and seen[2]["a"]["P"][0]["pa"] == "0"


async def test_f_is_the_orders_time_in_force(app: FastAPI, live_bot: Bot, live_url: str) -> None:
    """GTX and IOC limits report their own time in force; a market order GTC, as Binance."""
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    limit = {"symbol": "BTCUSDT", "side": "BUY", "type": "LIMIT", "quantity": "0.01"}
    async with user_stream(live_url, bot) as ws:
        resting = await bot.ok(
            "POST", "/v1/order", limit | {"price": "50000", "timeInForce": "GTX"}
        )
        gtx = await until(ws, lambda m: m.get("o", {}).get("i") == resting["orderId"])
        assert (gtx["o"]["x"], gtx["o"]["f"]) == ("NEW", "GTX")

        ioc = await bot.ok("POST", "/v1/order", limit | {"price": "50000", "timeInForce": "IOC"})
        expired = await until(
            ws, lambda m: m.get("o", {}).get("i") == ioc["orderId"] and m["o"]["x"] == "EXPIRED"
        )
        assert expired["o"]["f"] == "IOC"

        filled = await bot.ok("POST", "/v1/order", limit | {"type": "MARKET"})
        trade = await until(
            ws, lambda m: m.get("o", {}).get("i") == filled["orderId"] and m["o"]["x"] == "TRADE"
        )
        assert trade["o"]["f"] == "GTC"
        await bot.ok("DELETE", "/v1/order", {"symbol": "BTCUSDT", "orderId": resting["orderId"]})


async def test_copy_tradings_leverage_is_an_account_config_update(
    app: FastAPI, live_url: str, user_factory: Any
) -> None:
    """Copy trading opens the follower at the relation's leverage: a change of the follower's
    symbol leverage like any other, announced before the copied order."""
    leader: User = await user_factory()
    follower: User = await user_factory()
    await set_price(app, "BTCUSDT", "50000")
    led, _ = await leader_and_follower(leader, follower)
    async with client_for(app) as http:
        bot = await make_bot(follower, http, name="copies", initial_balance="10000")
        await follow(
            follower,
            led["id"],
            bot.portfolio_id,
            mode="fixed_amount",
            amount=100,
            allocation=1000,
            leverage=10,
        )
        async with user_stream(live_url, bot) as ws:
            await market(leader, led["id"], "BTCUSDT", "buy", "0.01")
            first = await recv(ws, within=15)
            assert config(first) and first["ac"] == {"s": "BTCUSDT", "l": 10}, first
            copied = await recv(ws)
            assert (copied["o"]["x"], copied["o"]["q"]) == ("NEW", "0.02")
