"""Binance streams, what test_streams.py leaves out (issue 35): a stop's trigger on the user data
stream (ALGO_UPDATE TRIGGERED, then the placed order's ORDER_TRADE_UPDATEs), ccxt.pro's
watch_orders seeing a limit order's cancel and a stop's trigger within a second, a deleted
portfolio ending its stream, and Binance's timing rules shortened by settings (a ping frame every
FAPI_WS_PING_S, a close at FAPI_WS_MAX_LIFETIME_S)."""

import asyncio
import time
from typing import Any

import aiohttp
import ccxt.pro
import pytest
from fastapi import FastAPI
from websockets.exceptions import ConnectionClosed

from papertrade.config import Settings
from tests.conftest import User, running_app
from tests.fapi.clients import ccxt_config
from tests.fapi.helpers import Bot
from tests.fapi.test_streams import SYMBOL, listen_key, live_bot, opened, recv, until, ws_base
from tests.liveserver import live_server
from tests.trading_api.helpers import set_price

__all__ = ["live_bot"]  # the fixture, shared with test_streams.py

MARKET = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"}
STOP = {
    "algoType": "CONDITIONAL",
    "symbol": "BTCUSDT",
    "side": "SELL",
    "type": "STOP_MARKET",
    "quantity": "0.01",
    "triggerPrice": "59000",
}
# Binance's promise is delivery within a second; the bound is measured from the event's own
# time `E` (the server's clock, which this machine shares) to its arrival.
WITHIN_MS = 1000


def kind(event: dict[str, Any]) -> str:
    execution = event.get("o", {}).get("x") if event["e"] == "ORDER_TRADE_UPDATE" else None
    status = event["o"]["X"] if event["e"] == "ALGO_UPDATE" else None
    return f"{event['e']}:{execution or status}" if execution or status else str(event["e"])


async def test_a_stops_trigger_reaches_the_user_stream(
    app: FastAPI, live_bot: Bot, live_url: str
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    key = await listen_key(bot)
    async with opened(f"{ws_base(live_url)}/private/ws?listenKey={key}") as ws:
        await asyncio.sleep(0.2)
        await bot.ok("POST", "/v1/order", MARKET)
        await until(ws, lambda m: m["e"] == "ACCOUNT_UPDATE")
        placed = await bot.ok("POST", "/v1/algoOrder", STOP)
        new = await until(ws, lambda m: m["e"] == "ALGO_UPDATE")
        assert (new["o"]["X"], new["o"]["aid"], new["o"]["ai"]) == ("NEW", placed["algoId"], "")

        await set_price(app, "BTCUSDT", "58000")  # through the trigger: the stop fires
        seen: list[dict[str, Any]] = []
        late: list[int] = []
        while not seen or seen[-1]["e"] != "ACCOUNT_UPDATE":
            seen.append(await recv(ws))
            late.append(int(time.time() * 1000) - seen[-1]["E"])
    assert [kind(e) for e in seen] == [
        "ALGO_UPDATE:TRIGGERED",
        "ORDER_TRADE_UPDATE:NEW",
        "ORDER_TRADE_UPDATE:TRADE",
        "TRADE_LITE",
        "ACCOUNT_UPDATE",
    ], seen
    triggered, order_new, trade = seen[0]["o"], seen[1]["o"], seen[2]["o"]
    assert triggered["aid"] == placed["algoId"] and triggered["tt"] > 0
    assert triggered["ai"] == str(order_new["i"]) == str(trade["i"])  # the order it placed
    assert (trade["S"], trade["o"], trade["X"], trade["l"]) == ("SELL", "MARKET", "FILLED", "0.01")
    assert seen[4]["a"]["P"][0]["pa"] == "0"  # the position is closed
    assert max(late) < WITHIN_MS, late


async def test_ccxt_pro_watch_orders_sees_a_cancel_and_a_stops_trigger_within_a_second(
    app: FastAPI, live_bot: Bot, live_url: str
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    config = ccxt_config(live_url, bot.api_key, bot.api_secret)
    config["urls"]["api"]["ws"] = {"linear": ws_base(live_url) + "/ws"}
    exchange = ccxt.pro.binanceusdm(config)

    async def next_update(action: Any, wanted: Any) -> tuple[dict[str, Any], float]:
        """Keep watch_orders going, act, and wait for the order update `wanted` picks out in
        ccxt's order cache (updates read in one go can land between two watch_orders calls);
        the seconds from the action's answer to the update."""
        watching = asyncio.ensure_future(exchange.watch_orders(SYMBOL))
        await asyncio.sleep(0.1)
        await action()
        acted = time.monotonic()
        try:
            async with asyncio.timeout(10):
                while True:
                    done, _ = await asyncio.wait({watching}, timeout=0.02)
                    found = [o for o in exchange.orders or [] if wanted(o)]
                    if found:
                        return found[-1], time.monotonic() - acted
                    if done:
                        watching = asyncio.ensure_future(exchange.watch_orders(SYMBOL))
        except TimeoutError:
            seen = [(o["id"], o["type"], o["status"]) for o in exchange.orders or []]
            raise AssertionError(f"not among ccxt's orders: {seen}") from None
        finally:
            watching.cancel()

    try:
        await exchange.load_markets()
        warming = asyncio.ensure_future(exchange.watch_orders(SYMBOL))
        await asyncio.sleep(1.0)  # the listenKey and the private socket
        warming.cancel()

        async def buy() -> None:
            await exchange.create_order(SYMBOL, "market", "buy", 0.01)

        bought, _ = await next_update(buy, lambda o: (o["side"], o["status"]) == ("buy", "closed"))
        assert bought["filled"] == 0.01

        resting = await exchange.create_order(SYMBOL, "limit", "buy", 0.01, 50000)

        async def cancel() -> None:
            await exchange.cancel_order(resting["id"], SYMBOL)

        canceled, after_cancel = await next_update(
            cancel, lambda o: o["id"] == resting["id"] and o["status"] == "canceled"
        )
        assert canceled["price"] == 50000

        stop = await exchange.create_order(
            SYMBOL, "stop_market", "sell", 0.01, None, {"stopPrice": 59000, "reduceOnly": True}
        )

        async def through_the_trigger() -> None:
            await set_price(app, "BTCUSDT", "58000")

        fired, after_trigger = await next_update(
            through_the_trigger,
            # the order the stop placed (an ORDER_TRADE_UPDATE: `i`; the ALGO_UPDATE has `aid`)
            lambda o: "i" in o["info"] and (o["side"], o["status"]) == ("sell", "closed"),
        )
        assert (fired["type"], fired["filled"]) == ("market", 0.01) and fired["id"] != stop["id"]
        triggered = [o for o in exchange.orders if o["id"] == stop["id"]]
        assert triggered[-1]["info"]["X"] == "TRIGGERED"
        assert triggered[-1]["info"]["ai"] == fired["id"]
        assert after_cancel < 1.0 and after_trigger < 1.0, (after_cancel, after_trigger)
        positions = await exchange.fetch_positions([SYMBOL])
        assert all(not p["contracts"] for p in positions)
    finally:
        await exchange.close()


async def test_a_deleted_portfolio_ends_its_stream(
    app: FastAPI, live_bot: Bot, live_url: str, user: User
) -> None:
    bot = live_bot
    key = await listen_key(bot)
    async with opened(f"{ws_base(live_url)}/private/ws?listenKey={key}") as ws:
        await asyncio.sleep(0.1)
        deleted = await user.delete(f"/v1/portfolios/{bot.portfolio_id}")
        assert deleted.status_code == 200, deleted.text
        await app.state.binance_streams.check()  # the periodic check (fapi_ws_check_s), now
        message = await recv(ws)
        assert (message["e"], message["listenKey"]) == ("listenKeyExpired", key)
        with pytest.raises(ConnectionClosed):
            await recv(ws)
    gone = await bot.client.put(f"/fapi/v1/listenKey?listenKey={key}", headers=bot_header(bot))
    assert gone.json()["code"] in (-1125, -2015), gone.text  # the key, or its key pair, is gone


def bot_header(bot: Bot) -> dict[str, str]:
    return {"X-MBX-APIKEY": bot.api_key}


async def test_ping_frames_and_the_connection_lifetime_follow_the_settings(
    isolated_settings: Settings,
) -> None:
    """Binance pings every 3 minutes and closes a connection at 24 hours; both are settings
    (FAPI_WS_PING_S, FAPI_WS_MAX_LIFETIME_S), here 0.2 s and 2 s."""
    shortened = isolated_settings.model_copy(
        update={"fapi_ws_ping_s": 0.2, "fapi_ws_max_lifetime_s": 2.0}
    )
    async with (
        running_app(shortened) as app,
        live_server(app) as url,
        aiohttp.ClientSession() as http,
    ):
        start = time.monotonic()
        async with http.ws_connect(f"{ws_base(url)}/market/ws", autoping=False) as ws:
            pings = 0
            async with asyncio.timeout(10):
                while True:
                    message = await ws.receive()
                    if message.type == aiohttp.WSMsgType.PING:
                        pings += 1
                        await ws.pong(message.data)
                        continue
                    break
            lasted = time.monotonic() - start
        assert message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED), message
        assert ws.close_code == 1000, (ws.close_code, message)
        assert 1.5 <= lasted < 6, lasted
        assert pings >= 4, pings  # some 9 in 2 s; a loaded machine may delay a few
