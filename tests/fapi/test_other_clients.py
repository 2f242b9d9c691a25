"""python-binance 1.0.37 and binance-futures-connector 4.2.0 through their main calls.

Both clients block, so each scenario runs in a worker thread against the live server.
"""

import asyncio
import warnings
from typing import Any

import pytest
from fastapi import FastAPI

with warnings.catch_warnings():  # python-binance imports deprecated websockets APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    from binance.client import Client  # type: ignore[import-untyped]
    from binance.error import ClientError  # type: ignore[import-untyped]
    from binance.exceptions import BinanceAPIException  # type: ignore[import-untyped]
    from binance.um_futures import UMFutures  # type: ignore[import-untyped]

from tests.conftest import User
from tests.trading_api.helpers import equity, positions, set_price


def python_binance(base: str, api_key: str, api_secret: str) -> Client:
    client = Client(api_key, api_secret, ping=False)
    client.FUTURES_URL = f"{base}/fapi"
    return client


def python_binance_run(client: Client) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    assert client.futures_ping() == {}
    assert client.futures_time()["serverTime"] > 0
    info = client.futures_exchange_info()
    seen["symbols"] = {s["symbol"] for s in info["symbols"]}
    seen["balance"] = client.futures_account_balance()
    seen["account"] = client.futures_account()
    seen["leverage"] = client.futures_change_leverage(symbol="BTCUSDT", leverage=5)
    seen["order"] = client.futures_create_order(
        symbol="BTCUSDT", side="BUY", type="MARKET", quantity=0.01
    )
    seen["queried"] = client.futures_get_order(symbol="BTCUSDT", orderId=seen["order"]["orderId"])
    seen["positions"] = client.futures_position_information()
    seen["trades"] = client.futures_account_trades(symbol="BTCUSDT")
    seen["limit"] = client.futures_create_order(
        symbol="BTCUSDT",
        side="SELL",
        type="LIMIT",
        timeInForce="GTC",
        quantity="0.01",
        price="70000",
        reduceOnly="true",
    )
    seen["open"] = client.futures_get_open_orders(symbol="BTCUSDT")
    seen["canceled"] = client.futures_cancel_order(
        symbol="BTCUSDT", orderId=seen["limit"]["orderId"]
    )
    seen["ticker"] = client.futures_symbol_ticker(symbol="BTCUSDT")
    seen["24hr"] = client.futures_ticker(symbol="BTCUSDT")
    seen["mark"] = client.futures_mark_price(symbol="BTCUSDT")
    seen["klines"] = client.futures_klines(symbol="BTCUSDT", interval="1m", limit=5)
    seen["brackets"] = client.futures_leverage_bracket(symbol="BTCUSDT")
    try:
        client.futures_cancel_order(symbol="BTCUSDT", orderId=seen["limit"]["orderId"])
    except BinanceAPIException as exc:
        seen["cancel_again"] = (exc.status_code, exc.code)
    return seen


async def test_python_binance(app: FastAPI, live_url: str, user: User) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    client = python_binance(live_url, api_key, api_secret)
    seen = await asyncio.to_thread(python_binance_run, client)

    assert "BTCUSDT" in seen["symbols"]
    assert (
        seen["balance"][0]["asset"] == "USDT" and seen["balance"][0]["balance"] == "10000.00000000"
    )
    assert seen["account"]["totalWalletBalance"] == "10000.00000000"
    assert seen["leverage"] == {"leverage": 5, "maxNotionalValue": "480000000", "symbol": "BTCUSDT"}
    order = seen["order"]
    assert order["status"] == "FILLED" and order["clientOrderId"].startswith("x-Cb7ytekJ")
    assert seen["queried"]["executedQty"] == "0.010" and seen["queried"]["time"] > 0
    [held] = seen["positions"]
    assert held["positionAmt"] == "0.010" and held["entryPrice"] == "60000.00"
    assert held["initialMargin"] == "120.00000000"  # 600 notional at 5x
    assert [t["qty"] for t in seen["trades"]] == ["0.010"]
    assert seen["limit"]["status"] == "NEW" and seen["limit"]["reduceOnly"] is True
    assert [o["orderId"] for o in seen["open"]] == [seen["limit"]["orderId"]]
    assert seen["canceled"]["status"] == "CANCELED"
    assert seen["ticker"]["price"] == "60000.00"
    assert seen["24hr"]["lastPrice"] == "60000.00"
    assert seen["mark"]["markPrice"] == "60000.00"
    assert len(seen["klines"]) == 5 and len(seen["klines"][0]) == 12
    assert seen["brackets"]["brackets"][0]["initialLeverage"] == 125
    assert seen["cancel_again"] == (400, -2011)
    assert (await positions(user, portfolio["id"]))["BTCUSDT"]["quantity"] == 0.01


def connector_run(client: UMFutures) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    assert client.ping() == {}
    assert client.time()["serverTime"] > 0
    seen["info"] = client.exchange_info()
    seen["balance"] = client.balance()
    seen["account"] = client.account()
    seen["leverage"] = client.change_leverage(symbol="ETHUSDT", leverage=10)
    seen["order"] = client.new_order(symbol="ETHUSDT", side="SELL", type="MARKET", quantity=1)
    seen["queried"] = client.query_order(symbol="ETHUSDT", orderId=seen["order"]["orderId"])
    seen["limit"] = client.new_order(
        symbol="ETHUSDT", side="BUY", type="LIMIT", quantity=0.5, price=2500, timeInForce="GTC"
    )
    seen["open_one"] = client.get_open_orders(symbol="ETHUSDT", orderId=seen["limit"]["orderId"])
    seen["open_all"] = client.get_orders(symbol="ETHUSDT")
    seen["canceled"] = client.cancel_order(symbol="ETHUSDT", orderId=seen["limit"]["orderId"])
    seen["positions"] = client.get_position_risk()
    seen["trades"] = client.get_account_trades(symbol="ETHUSDT")
    seen["price"] = client.ticker_price("ETHUSDT")
    seen["book"] = client.book_ticker("ETHUSDT")
    seen["depth"] = client.depth("ETHUSDT", limit=5)
    seen["brackets"] = client.leverage_brackets(symbol="ETHUSDT")
    seen["income"] = client.get_income_history(symbol="ETHUSDT")
    seen["mode"] = client.get_position_mode()
    seen["multi"] = client.get_multi_asset_mode()
    try:
        client.change_margin_type(symbol="ETHUSDT", marginType="CROSSED")
    except ClientError as exc:
        seen["margin_type"] = (exc.status_code, exc.error_code, exc.error_message)
    try:
        client.new_order(symbol="ETHUSDT", side="BUY", type="MARKET", quantity=1000)
    except ClientError as exc:
        seen["too_big"] = (exc.status_code, exc.error_code)
    return seen


async def test_binance_futures_connector(app: FastAPI, live_url: str, user: User) -> None:
    await set_price(app, "ETHUSDT", "3000")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    client = UMFutures(key=api_key, secret=api_secret, base_url=live_url)
    seen = await asyncio.to_thread(connector_run, client)

    assert any(s["symbol"] == "ETHUSDT" for s in seen["info"]["symbols"])
    assert seen["balance"][0]["availableBalance"] == "10000.00000000"
    assert seen["account"]["assets"][0]["walletBalance"] == "10000.00000000"
    assert seen["leverage"]["leverage"] == 10
    assert seen["order"]["status"] == "FILLED" and seen["order"]["clientOrderId"]
    assert seen["queried"]["avgPrice"] == "3000.00"
    assert seen["limit"]["status"] == "NEW"
    assert seen["open_one"]["orderId"] == seen["limit"]["orderId"]
    assert [o["orderId"] for o in seen["open_all"]] == [seen["limit"]["orderId"]]
    assert seen["canceled"]["status"] == "CANCELED"
    [held] = seen["positions"]
    assert held["positionAmt"] == "-1.000" and held["notional"] == "-3000.00000000"
    assert held["initialMargin"] == "300.00000000"
    assert seen["trades"][0]["commission"] == "1.50000000"
    assert seen["price"]["price"] == "3000.00"
    assert seen["book"]["bidPrice"] == "2999.99" and seen["book"]["askPrice"] == "3000.01"
    assert len(seen["depth"]["bids"]) == 5
    assert seen["brackets"]["symbol"] == "ETHUSDT"
    assert [i["incomeType"] for i in seen["income"]] == ["COMMISSION"]
    assert seen["mode"] == {"dualSidePosition": False}
    assert seen["multi"] == {"multiAssetsMargin": False}
    assert seen["margin_type"] == (400, -4046, "No need to change margin type.")
    assert seen["too_big"] == (400, -2019)
    assert (await equity(user, portfolio["id"]))["balance"] == pytest.approx(9998.5)
