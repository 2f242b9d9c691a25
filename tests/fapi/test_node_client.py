"""The `binance` npm package (USDMClient, pinned in tests/node/package.json), a popular Node.js
client, unmodified, against the live server: a session's calls in one Node process."""

import asyncio
import itertools
import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from tests.conftest import User
from tests.trading_api.helpers import set_price

NODE_DIR = Path(__file__).parents[1] / "node"


async def run_node(live_url: str, api_key: str, api_secret: str) -> dict[str, Any]:
    process = await asyncio.create_subprocess_exec(
        "node",
        "usdm.mjs",
        live_url,
        api_key,
        api_secret,
        cwd=NODE_DIR,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    assert process.returncode == 0, err.decode()[-2000:]
    return dict(json.loads(out.decode().strip().splitlines()[-1]))


async def test_the_binance_npm_client(app: FastAPI, live_url: str, user: User) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    seen = await run_node(live_url, api_key, api_secret)
    failed = {name: v["error"] for name, v in seen.items() if "error" in v and name != "tooMuch"}
    assert failed == {}, failed
    ok = {name: v["ok"] for name, v in seen.items() if "ok" in v}

    assert ok["ping"] == {} and "BTCUSDT" in ok["symbols"]
    assert float(ok["markPrice"]["markPrice"]) == 60000
    assert float(ok["balance"][0]["balance"]) == 10000 and ok["balance"][0]["asset"] == "USDT"
    assert int(ok["leverage"]["leverage"]) == 10
    market = ok["market"]
    assert market["status"] == "FILLED" and float(market["avgPrice"]) == 60000
    assert ok["limit"]["status"] == "NEW"
    assert ok["stop"]["orderType"] == "STOP_MARKET" and ok["stop"]["algoStatus"] == "NEW"
    assert [o["orderId"] for o in ok["openOrders"]] == [ok["limit"]["orderId"]]
    (position,) = ok["positions"]
    assert float(position["positionAmt"]) == 0.01 and float(position["entryPrice"]) == 60000
    assert ok["cancelAll"]["code"] == 200
    statuses = {o["orderId"]: o["status"] for o in ok["allOrders"]}
    assert statuses == {market["orderId"]: "FILLED", ok["limit"]["orderId"]: "CANCELED"}
    assert [t["orderId"] for t in ok["trades"]] == [market["orderId"]]
    assert {i["incomeType"] for i in ok["income"]} >= {"COMMISSION"}
    assert ok["liquidations"] == [] and ok["fundingInfo"] == []
    # a refusal reaches the client as Binance's error body
    assert seen["tooMuch"]["error"]["code"] == -2019, seen["tooMuch"]


async def test_the_binance_npm_websocket_client(app: FastAPI, live_url: str, user: User) -> None:
    """Its WebsocketClient (wsUrl = the service): the user data stream on /private/stream (a
    listenKey it asks for over REST), mark price and depth on /market and /public."""
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    api_key, api_secret = await user.compat_key(portfolio["id"])
    process = await asyncio.create_subprocess_exec(
        "node",
        "ws.mjs",
        live_url,
        api_key,
        api_secret,
        cwd=NODE_DIR,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=60)
    assert process.returncode == 0, err.decode()[-2000:]
    seen: list[dict[str, Any]] = json.loads(out.decode().strip().splitlines()[-1])
    # It unwraps the combined frames and tells each event's stream and connection.
    by_stream: dict[str, list[dict[str, Any]]] = {}
    for message in seen:
        by_stream.setdefault(message.get("streamName", "?"), []).append(message)
    market = {"usdmPublic", "usdmMarket"}
    user_events = [m for m in seen if m["wsKey"] not in market]
    kinds = [(e["e"], e.get("o", {}).get("x")) for e in user_events]
    assert kinds == [
        ("ORDER_TRADE_UPDATE", "NEW"),
        ("ORDER_TRADE_UPDATE", "TRADE"),
        ("TRADE_LITE", None),
        ("ACCOUNT_UPDATE", None),
    ], kinds
    assert user_events[1]["o"]["X"] == "FILLED" and user_events[1]["o"]["t"] > 0
    # its user data connection, named after the listenKey it was given on /private
    assert all(m["wsKey"].endswith("usdmPrivate") for m in user_events)
    assert by_stream["btcusdt@markPrice@1s"][0]["e"] == "markPriceUpdate"
    depth = by_stream["btcusdt@depth@100ms"]
    assert all(b["pu"] == a["u"] for a, b in itertools.pairwise(depth))
