"""Batches of orders (`POST` / `DELETE /fapi/v1/batchOrders`): each item answers for itself, in
the order sent, and one refused never stops the others; driven raw, and through the three
Python clients' own batch calls (ccxt's create_orders / cancel_orders, python-binance,
binance-futures-connector)."""

import asyncio
import json
import warnings
from decimal import Decimal
from typing import Any

import pytest
from fastapi import FastAPI

from tests.conftest import User
from tests.fapi.clients import ccxt_usdm
from tests.fapi.helpers import Bot
from tests.fapi.test_other_clients import python_binance
from tests.trading_api.helpers import positions, set_price

with warnings.catch_warnings():  # python-binance imports deprecated websockets APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    from binance.um_futures import UMFutures  # type: ignore[import-untyped]


def _batch(*orders: Any) -> dict[str, str]:
    return {"batchOrders": json.dumps(list(orders))}


async def _open_orders(bot: Bot) -> list[int]:
    listed = await bot.ok("GET", "/v1/openOrders", {"symbol": "BTCUSDT"})
    return [o["orderId"] for o in listed]


async def test_a_batch_places_each_order_and_explains_each_refusal(app: FastAPI, bot: Bot) -> None:
    await set_price(app, "BTCUSDT", "60000")
    response = await bot.call(
        "POST",
        "/v1/batchOrders",
        _batch(
            {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.010"},
            {"symbol": "BTCUSDT", "side": "UP", "type": "MARKET", "quantity": "0.010"},
            # numbers and booleans as JSON values, as some clients send them
            {
                "symbol": "BTCUSDT",
                "side": "SELL",
                "type": "LIMIT",
                "quantity": 0.01,
                "price": 65000,
                "timeInForce": "GTC",
                "reduceOnly": True,
            },
            {"symbol": "NOPEUSDT", "side": "BUY", "type": "MARKET", "quantity": "1"},
            "not an order",
        ),
        in_body=True,
    )
    assert response.status_code == 200, response.text
    market, wrong_side, limit, unknown, not_an_order = response.json()
    assert (market["status"], market["executedQty"], market["avgPrice"]) == (
        "FILLED",
        "0.010",
        "60000.00",
    )
    assert wrong_side == {"code": -1117, "msg": "Invalid side."}
    assert (limit["status"], limit["price"], limit["reduceOnly"]) == ("NEW", "65000.00", True)
    assert unknown["code"] == -1121
    assert not_an_order["code"] == -1130
    # Every order placed is charged against the key's order limits, not the request once.
    assert response.headers["X-MBX-ORDER-COUNT-10S"] == "5"
    assert response.headers["X-MBX-USED-WEIGHT-1M"] == "5"
    held = await positions(bot.user, bot.portfolio_id)
    assert Decimal(str(held["BTCUSDT"]["quantity"])) == Decimal("0.01")
    assert await _open_orders(bot) == [limit["orderId"]]


async def test_a_batch_cancel_cancels_each_and_names_the_unknown(app: FastAPI, bot: Bot) -> None:
    await set_price(app, "BTCUSDT", "60000")
    resting = [
        {
            "symbol": "BTCUSDT",
            "side": "BUY",
            "type": "LIMIT",
            "quantity": "0.010",
            "price": str(price),
            "timeInForce": "GTC",
            "newClientOrderId": f"grid-{price}",
        }
        for price in (59000, 58000, 57000)
    ]
    placed = await bot.ok("POST", "/v1/batchOrders", _batch(*resting))
    ids = [o["orderId"] for o in placed]

    by_id = await bot.ok(
        "DELETE",
        "/v1/batchOrders",
        {"symbol": "BTCUSDT", "orderIdList": json.dumps([ids[0], 999_999_999, ids[1]])},
    )
    assert [o.get("status") for o in by_id] == ["CANCELED", None, "CANCELED"]
    assert by_id[1]["code"] == -2011
    by_client_id = await bot.ok(
        "DELETE",
        "/v1/batchOrders",
        {"symbol": "BTCUSDT", "origClientOrderIdList": json.dumps(["grid-57000", "grid-59000"])},
    )
    assert by_client_id[0]["status"] == "CANCELED"
    assert by_client_id[0]["clientOrderId"] == "grid-57000"
    assert by_client_id[1]["code"] == -2011  # cancelled already
    assert await _open_orders(bot) == []


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({}, -1102),
        ({"batchOrders": "[]"}, -1130),
        ({"batchOrders": "{not json"}, -1130),
        ({"batchOrders": '{"symbol": "BTCUSDT"}'}, -1130),
        (_batch(*[{"symbol": "BTCUSDT"}] * 6), -1130),  # at most five
    ],
)
async def test_a_malformed_batch_is_refused_whole(
    app: FastAPI, bot: Bot, params: dict[str, str], code: int
) -> None:
    response = await bot.call("POST", "/v1/batchOrders", params, in_body=True)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == code
    assert await _open_orders(bot) == []


async def test_hostile_items_are_refused_alone(app: FastAPI, bot: Bot) -> None:
    await set_price(app, "BTCUSDT", "60000")
    order = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.010"}
    answers = await bot.ok(
        "POST",
        "/v1/batchOrders",
        _batch(
            {**order, "newClientOrderId": "nul\u0000id"},
            {**order, "quantity": {"nested": 1}},
            {**order, **{f"p{n}": "1" for n in range(40)}},
            order,
        ),
    )
    assert [a.get("code") for a in answers[:3]] == [-1100, -1130, -1101]
    assert answers[3]["status"] == "FILLED"
    cancels = await bot.call(
        "DELETE",
        "/v1/batchOrders",
        {"symbol": "BTCUSDT", "orderIdList": "[1]", "origClientOrderIdList": '["a"]'},
    )
    assert cancels.status_code == 400 and cancels.json()["code"] == -1128
    odd = await bot.ok(
        "DELETE", "/v1/batchOrders", {"symbol": "BTCUSDT", "orderIdList": '[true, 1.5, "x"]'}
    )
    assert [a["code"] for a in odd] == [-1130, -1130, -1100]
    nul = await bot.ok(
        "DELETE", "/v1/batchOrders", {"symbol": "BTCUSDT", "origClientOrderIdList": '["a\\u0000"]'}
    )
    assert [a["code"] for a in nul] == [-1100]


async def test_the_clients_batch_calls(app: FastAPI, live_url: str, user: User) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])

    exchange = ccxt_usdm(live_url, api_key, api_secret)
    try:
        placed = await exchange.create_orders(
            [
                {
                    "symbol": "BTC/USDT:USDT",
                    "type": "limit",
                    "side": "buy",
                    "amount": 0.01,
                    "price": 50000,
                },
                {
                    "symbol": "BTC/USDT:USDT",
                    "type": "limit",
                    "side": "buy",
                    "amount": 0.01,
                    "price": 51000,
                },
            ]
        )
        assert [o["status"] for o in placed] == ["open", "open"]
        cancelled = await exchange.cancel_orders([o["id"] for o in placed], "BTC/USDT:USDT")
        assert [o["status"] for o in cancelled] == ["canceled", "canceled"]
    finally:
        await exchange.close()

    def python_binance_batch() -> list[Any]:
        client = python_binance(live_url, api_key, api_secret)
        return list(
            client.futures_place_batch_order(
                batchOrders=[
                    {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.002"},
                    {
                        "symbol": "BTCUSDT",
                        "side": "BUY",
                        "type": "LIMIT",
                        "quantity": "0.002",
                        "price": "52000",
                        "timeInForce": "GTC",
                    },
                ]
            )
        )

    market, limit = await asyncio.to_thread(python_binance_batch)
    assert market["status"] == "FILLED" and limit["status"] == "NEW"

    def connector_cancel() -> Any:
        client = UMFutures(key=api_key, secret=api_secret, base_url=live_url)
        return client.cancel_batch_order(
            symbol="BTCUSDT", orderIdList=[limit["orderId"]], origClientOrderIdList=None
        )

    [cancelled_limit] = await asyncio.to_thread(connector_cancel)
    assert cancelled_limit["status"] == "CANCELED"
    held = await positions(user, portfolio["id"])
    assert Decimal(str(held["BTCUSDT"]["quantity"])) == Decimal("0.002")
