"""Stops on the exchange with the real client libraries over HTTP: ccxt (Algo API through
stopLossPrice / takeProfitPrice / triggerPrice / trailingPercent), python-binance (STOP_MARKET,
routed to the Algo API), and a bot that still sends STOP_MARKET to /fapi/v1/order."""

import asyncio
import warnings
from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastapi import FastAPI

from tests.conftest import User, client_for
from tests.fapi.clients import ccxt_usdm
from tests.fapi.helpers import Bot, make_bot
from tests.trading_api.helpers import positions, set_price

with warnings.catch_warnings():  # python-binance imports deprecated websockets APIs
    warnings.simplefilter("ignore")
    from binance.client import Client  # type: ignore[import-untyped]

SYMBOL = "BTC/USDT:USDT"


@pytest.fixture
async def exchange(user: User, live_url: str) -> AsyncIterator[Any]:
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    made = ccxt_usdm(live_url, api_key, api_secret)
    made.portfolio_id = portfolio["id"]  # the portfolio its key trades
    yield made
    await made.close()


async def _until(check: Any, within: float = 15) -> Any:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        value = await check()
        if value:
            return value
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)


async def test_ccxt_stop_loss_triggers_and_links_the_order(
    app: FastAPI, user: User, exchange: Any
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    markets = await exchange.load_markets()
    assert "STOP_MARKET" in markets[SYMBOL]["info"]["orderTypes"]
    await exchange.create_order(SYMBOL, "market", "buy", 0.01)
    stop = await exchange.create_order(
        SYMBOL, "market", "sell", 0.01, None, {"stopLossPrice": 58000, "reduceOnly": True}
    )
    assert stop["status"] == "open" and stop["triggerPrice"] == 58000
    assert stop["info"]["orderType"] == "STOP_MARKET" and stop["reduceOnly"] is True
    listed = await exchange.fetch_open_orders(SYMBOL, None, None, {"trigger": True})
    assert [o["id"] for o in listed] == [stop["id"]]
    await set_price(app, "BTCUSDT", "57950")

    async def finished() -> Any:
        got = await exchange.fetch_order(stop["id"], SYMBOL, {"trigger": True})
        return got if got["status"] == "closed" else None

    done = await _until(finished)
    assert done["info"]["algoStatus"] == "FINISHED"
    actual = await exchange.fetch_order(done["info"]["actualOrderId"], SYMBOL)
    assert actual["status"] == "closed" and actual["side"] == "sell" and actual["average"] == 57950
    assert await exchange.fetch_positions([SYMBOL]) == []
    assert await exchange.fetch_open_orders(SYMBOL, None, None, {"trigger": True}) == []


async def test_ccxt_take_profit_cancel_and_stop_limit(
    app: FastAPI, user: User, exchange: Any
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    await exchange.load_markets()
    await exchange.create_order(SYMBOL, "market", "buy", 0.01)
    tp = await exchange.create_order(
        SYMBOL, "market", "sell", 0.01, None, {"takeProfitPrice": 65000, "reduceOnly": True}
    )
    assert tp["info"]["orderType"] == "TAKE_PROFIT_MARKET" and tp["takeProfitPrice"] == 65000
    canceled = await exchange.cancel_order(tp["id"], SYMBOL, {"trigger": True})
    assert canceled["id"] == tp["id"]
    fetched = await exchange.fetch_order(tp["id"], SYMBOL, {"trigger": True})
    assert fetched["status"] == "canceled"
    stop_limit = await exchange.create_order(
        SYMBOL, "limit", "buy", 0.01, 61100, {"triggerPrice": 61000}
    )
    assert stop_limit["info"]["orderType"] == "STOP" and stop_limit["price"] == 61100
    await set_price(app, "BTCUSDT", "61050")

    async def triggered() -> Any:
        got = await exchange.fetch_order(stop_limit["id"], SYMBOL, {"trigger": True})
        return got["info"].get("actualOrderId")

    placed = await exchange.fetch_order(await _until(triggered), SYMBOL)
    assert placed["type"] == "limit" and placed["price"] == 61100 and placed["status"] == "closed"
    assert (await positions(user, exchange.portfolio_id))["BTCUSDT"]["quantity"] == 0.02


async def test_ccxt_trailing_stop(app: FastAPI, user: User, exchange: Any) -> None:
    await set_price(app, "BTCUSDT", "60000")
    await exchange.load_markets()
    await exchange.create_order(SYMBOL, "market", "buy", 0.01)
    trail = await exchange.create_order(
        SYMBOL, "market", "sell", 0.01, None, {"trailingPercent": 2, "reduceOnly": True}
    )
    assert trail["info"]["orderType"] == "TRAILING_STOP_MARKET"
    await set_price(app, "BTCUSDT", "63000")  # stop moves to 61740
    await set_price(app, "BTCUSDT", "61700")

    async def flat() -> bool:
        return await positions(user, exchange.portfolio_id) == {}

    await _until(flat)


def _python_binance_stop(base: str, api_key: str, api_secret: str) -> dict[str, Any]:
    client = Client(api_key, api_secret, ping=False)
    client.FUTURES_URL = f"{base}/fapi"
    seen: dict[str, Any] = {}
    client.futures_create_order(symbol="BTCUSDT", side="BUY", type="MARKET", quantity=0.01)
    seen["stop"] = client.futures_create_order(
        symbol="BTCUSDT",
        side="SELL",
        type="STOP_MARKET",
        stopPrice="59000",
        closePosition="true",
        workingType="MARK_PRICE",
    )
    seen["open"] = client.futures_get_open_orders(symbol="BTCUSDT", conditional=True)
    seen["query"] = client.futures_get_order(symbol="BTCUSDT", algoId=seen["stop"]["algoId"])
    return seen


async def test_python_binance_stop_market_goes_to_the_algo_api(
    app: FastAPI, user: User, live_url: str
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    seen = await asyncio.to_thread(_python_binance_stop, live_url, api_key, api_secret)
    stop = seen["stop"]
    assert stop["algoType"] == "CONDITIONAL" and stop["orderType"] == "STOP_MARKET"
    assert float(stop["triggerPrice"]) == 59000 and stop["closePosition"] is True
    assert stop["workingType"] == "MARK_PRICE" and stop["algoStatus"] == "NEW"
    assert [o["algoId"] for o in seen["open"]] == [stop["algoId"]]
    assert seen["query"]["clientAlgoId"] == stop["clientAlgoId"]
    await set_price(app, "BTCUSDT", "58900")

    async def flat() -> bool:
        return await positions(user, portfolio["id"]) == {}

    await _until(flat)


@pytest.fixture
async def bot(user: User, app: FastAPI) -> AsyncIterator[Bot]:
    async with client_for(app) as client:
        yield await make_bot(user, client)


async def test_stop_market_on_the_older_order_endpoint_is_accepted(app: FastAPI, bot: Bot) -> None:
    await set_price(app, "BTCUSDT", "60000")
    entry = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"}
    await bot.ok("POST", "/v1/order", entry)
    stop = await bot.ok(
        "POST",
        "/v1/order",
        {
            "symbol": "BTCUSDT",
            "side": "SELL",
            "type": "STOP_MARKET",
            "stopPrice": "58000",
            "closePosition": "true",
        },
    )
    assert stop["type"] == "STOP_MARKET" and stop["status"] == "NEW"
    assert float(stop["stopPrice"]) == 58000 and stop["closePosition"] is True
    listed = await bot.ok("GET", "/v1/openOrders", {"symbol": "BTCUSDT"})
    assert [o["orderId"] for o in listed] == [stop["orderId"]]
    await set_price(app, "BTCUSDT", "57000")
    named = {"symbol": "BTCUSDT", "orderId": stop["orderId"]}

    async def filled() -> Any:
        got = await bot.ok("GET", "/v1/order", named)
        return got if got["status"] == "FILLED" else None

    done = await _until(filled)
    assert done["executedQty"] == "0.010" and float(done["avgPrice"]) == 57000
    assert (await bot.error("DELETE", "/v1/order", named))[:2] == (400, -2011)
    assert await positions(bot.user, bot.portfolio_id) == {}
    again = await bot.ok(
        "POST",
        "/v1/order",
        {
            "symbol": "BTCUSDT",
            "side": "BUY",
            "type": "STOP_MARKET",
            "stopPrice": "58000",
            "quantity": "0.01",
        },
    )
    await bot.ok("DELETE", "/v1/allOpenOrders", {"symbol": "BTCUSDT"})
    gone = await bot.ok("GET", "/v1/order", {"symbol": "BTCUSDT", "orderId": again["orderId"]})
    assert gone["status"] == "CANCELED"
    assert await bot.ok("GET", "/v1/openOrders", {"symbol": "BTCUSDT"}) == []


async def test_algo_order_errors_are_binance_shaped(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    stop = {
        "algoType": "CONDITIONAL",
        "symbol": "BTCUSDT",
        "side": "BUY",
        "type": "STOP_MARKET",
        "quantity": "0.01",
    }
    assert (await bot.error("POST", "/v1/algoOrder", stop | {"triggerPrice": "59000"}))[:2] == (
        400,
        -2021,
    )
    assert (await bot.error("POST", "/v1/algoOrder", stop))[:2] == (400, -1102)
    unknown = {"symbol": "BTCUSDT", "algoId": "999999"}
    assert (await bot.error("DELETE", "/v1/algoOrder", unknown))[:2] == (400, -2011)
    assert (await bot.error("GET", "/v1/algoOrder", unknown))[:2] == (400, -2013)


async def test_ccxt_as_freqtrade_places_and_follows_its_stoploss(
    app: FastAPI, user: User, exchange: Any
) -> None:
    """freqtrade's stoploss_on_exchange on Binance futures: a `stop_market` order with
    `stopPrice` and reduceOnly, polled with {"stop": True}, then the order it placed."""
    await set_price(app, "BTCUSDT", "60000")
    await exchange.load_markets()
    await exchange.create_order(SYMBOL, "market", "buy", 0.01)
    stop = await exchange.create_order(
        SYMBOL, "stop_market", "sell", 0.01, None, {"stopPrice": 58000, "reduceOnly": True}
    )
    assert stop["info"]["orderType"] == "STOP_MARKET" and stop["triggerPrice"] == 58000
    polled = await exchange.fetch_order(stop["id"], SYMBOL, {"stop": True})
    assert polled["status"] == "open" and polled["amount"] == 0.01
    await set_price(app, "BTCUSDT", "57500")

    async def closed() -> Any:
        got = await exchange.fetch_order(stop["id"], SYMBOL, {"stop": True})
        return got if got["status"] == "closed" else None

    done = await _until(closed)
    assert float(done["info"]["actualPrice"]) == 57500
    sold = await exchange.fetch_order(done["info"]["actualOrderId"], SYMBOL)
    assert (sold["status"], sold["filled"], sold["average"]) == ("closed", 0.01, 57500)
    history = await exchange.fetch_orders(SYMBOL, None, None, {"trigger": True})
    assert [(o["id"], o["status"]) for o in history] == [(stop["id"], "closed")]
