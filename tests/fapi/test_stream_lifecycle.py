"""Binance streams, what test_streams.py leaves out (issue 35): a stop's trigger on the user data
stream (ALGO_UPDATE TRIGGERED, then the placed order's ORDER_TRADE_UPDATEs), ccxt.pro's
watch_orders, watch_my_trades, watch_positions and watch_balance seeing a market order, a limit
order's cancel and a stop's trigger within a second (or, where Binance sends them nothing,
staying silent), a deleted portfolio ending its stream, and Binance's timing rules shortened by
settings (a ping frame every FAPI_WS_PING_S, a close at FAPI_WS_MAX_LIFETIME_S)."""

import asyncio
import copy
import time
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from fastapi import FastAPI
from websockets.exceptions import ConnectionClosed

from papertrade.config import Settings
from tests.conftest import User, running_app
from tests.fapi.helpers import Bot
from tests.fapi.test_streams import (
    SYMBOL,
    ccxt_pro,
    listed,
    listen_key,
    opened,
    recv,
    streaming,
    until,
    ws_base,
)
from tests.liveserver import live_server
from tests.trading_api.helpers import set_price

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
        await listed(ws, key)
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


class Watcher:
    """One ccxt.pro `watch_*` kept going in a loop, as a bot runs it: every value it yields, with
    the moment (time.monotonic) it yielded. The next call registers its wait in the same step as
    the yield (ccxt's watch_* do not suspend before it once authenticated), so no update falls
    between two calls unseen."""

    def __init__(self, name: str, watch: Callable[[], Awaitable[Any]]) -> None:
        self.name = name
        self.watch = watch
        self.yields: list[tuple[float, Any]] = []
        self.failed: BaseException | None = None
        self._arrived = asyncio.Event()
        self.task = asyncio.create_task(self._loop())

    async def _loop(self) -> None:
        try:
            while True:
                value = await self.watch()
                self.yields.append((time.monotonic(), copy.deepcopy(value)))
                self._arrived.set()
        except Exception as exc:
            self.failed = exc
            self._arrived.set()

    async def nth(self, n: int, within: float = 30) -> tuple[float, Any]:
        """Its n-th yield (from 0), once it came."""
        try:
            async with asyncio.timeout(within):
                while len(self.yields) <= n and self.failed is None:
                    self._arrived.clear()
                    await self._arrived.wait()
        except TimeoutError:
            seen = [value for _, value in self.yields]
            raise AssertionError(f"{self.name} yielded no update #{n}; it yielded {seen}") from None
        if self.failed is not None and len(self.yields) <= n:
            raise AssertionError(f"{self.name} failed: {self.failed!r}") from self.failed
        return self.yields[n]

    async def first(self, since: int, wanted: Callable[[Any], bool]) -> tuple[float, Any]:
        """Its first yield from the n-th on that `wanted` accepts."""
        n = since
        while not wanted((found := await self.nth(n))[1]):
            n += 1
        return found


def _order(orders: list[dict[str, Any]], order_id: str, status: str) -> bool:
    return any(o["id"] == order_id and o["status"] == status for o in orders)


async def test_ccxt_pro_user_watchers_see_an_order_a_cancel_and_a_trigger_within_a_second(
    app: FastAPI, live_bot: Bot, live_url: str
) -> None:
    """watch_orders, watch_my_trades, watch_positions and watch_balance running at once, as a bot
    runs them, through a market order, a limit order's cancel and a stop's trigger. Each update
    is timed from the moment the REST call answered (for the trigger: the moment the price had
    moved through it) to the moment the watcher yielded it, and must take at most a second.

    What each watcher sees is what Binance sends: every fill is an ORDER_TRADE_UPDATE x=TRADE
    (watch_orders, watch_my_trades) and one ACCOUNT_UPDATE with the wallet balance and the
    changed position (watch_balance, watch_positions). Placing or canceling an order that does
    not trade changes neither wallet nor position, so Binance sends only the
    ORDER_TRADE_UPDATE (ALGO_UPDATE for the stop): watch_my_trades, watch_positions and
    watch_balance yield nothing for them (their next update is the trigger's)."""
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    exchange = ccxt_pro(live_url, bot)
    watchers: list[Watcher] = []
    try:
        await exchange.load_markets()
        orders = Watcher("watch_orders", lambda: exchange.watch_orders(SYMBOL))
        trades = Watcher("watch_my_trades", lambda: exchange.watch_my_trades(SYMBOL))
        positions = Watcher("watch_positions", lambda: exchange.watch_positions([SYMBOL]))
        balance = Watcher("watch_balance", exchange.watch_balance)
        watchers = [orders, trades, positions, balance]
        # ccxt's first watch_positions answers with its REST snapshot: no position yet
        assert (await positions.nth(0))[1] == []
        await streaming(app, bot.portfolio_id)  # the private socket's listenKey is registered
        late: dict[str, float] = {}

        async def wallet() -> float:
            return float((await bot.ok("GET", "/v2/balance"))[0]["balance"])

        # A market order: all four see it.
        since = {w.name: len(w.yields) for w in watchers}
        bought = await exchange.create_order(SYMBOL, "market", "buy", 0.01)
        acted = time.monotonic()
        at, _ = await orders.first(since[orders.name], lambda v: _order(v, bought["id"], "closed"))
        late["market: watch_orders"] = at - acted
        at, got = await trades.nth(since[trades.name])
        late["market: watch_my_trades"] = at - acted
        (trade,) = got
        assert (trade["symbol"], trade["side"], trade["order"]) == (SYMBOL, "buy", bought["id"])
        assert (trade["amount"], trade["price"]) == (0.01, 60000)
        listed = {t["id"] for t in await exchange.fetch_my_trades(SYMBOL)}
        assert trade["id"] in listed  # the fill's id, as GET /fapi/v1/userTrades gives it
        at, got = await positions.nth(since[positions.name])
        late["market: watch_positions"] = at - acted
        (position,) = got
        assert (position["symbol"], position["side"]) == (SYMBOL, "long")
        assert (position["contracts"], position["entryPrice"]) == (0.01, 60000)
        at, got = await balance.nth(since[balance.name])
        late["market: watch_balance"] = at - acted
        assert got["USDT"]["total"] == await wallet()  # the wallet less the fee
        quiet = {w.name: len(w.yields) for w in (trades, positions, balance)}

        # A limit order that rests, then its cancel: watch_orders sees both.
        since = {w.name: len(w.yields) for w in watchers}
        resting = await exchange.create_order(SYMBOL, "limit", "buy", 0.01, 50000)
        acted = time.monotonic()
        at, _ = await orders.first(since[orders.name], lambda v: _order(v, resting["id"], "open"))
        late["limit: watch_orders"] = at - acted
        since = {w.name: len(w.yields) for w in watchers}
        await exchange.cancel_order(resting["id"], SYMBOL)
        acted = time.monotonic()
        at, got = await orders.first(
            since[orders.name], lambda v: _order(v, resting["id"], "canceled")
        )
        late["cancel: watch_orders"] = at - acted
        assert [o["price"] for o in got if o["id"] == resting["id"]][-1] == 50000

        # A stop, placed (an ALGO_UPDATE NEW), then its trigger.
        stop = await exchange.create_order(
            SYMBOL, "stop_market", "sell", 0.01, None, {"stopPrice": 59000, "reduceOnly": True}
        )
        await orders.first(since[orders.name], lambda v: any(o["id"] == stop["id"] for o in v))
        # Nothing for the others so far: the cancel's and the stop's updates came after any
        # ACCOUNT_UPDATE the limit order or its cancel could have caused.
        assert {w.name: len(w.yields) for w in (trades, positions, balance)} == quiet
        since = {w.name: len(w.yields) for w in watchers}
        await set_price(app, "BTCUSDT", "58000")  # through the trigger: the stop fires
        acted = time.monotonic()

        def fired_order(v: list[dict[str, Any]]) -> bool:
            # the order the stop placed (an ORDER_TRADE_UPDATE: `i`; the ALGO_UPDATE has `aid`)
            return any(
                "i" in o["info"] and (o["side"], o["status"]) == ("sell", "closed") for o in v
            )

        at, got = await orders.first(since[orders.name], fired_order)
        late["trigger: watch_orders"] = at - acted
        fired = [o for o in exchange.orders if "i" in o["info"] and o["side"] == "sell"][-1]
        assert (fired["type"], fired["filled"]) == ("market", 0.01) and fired["id"] != stop["id"]
        triggered = [o for o in exchange.orders if o["id"] == stop["id"]]
        assert triggered[-1]["info"]["X"] == "TRIGGERED"
        assert triggered[-1]["info"]["ai"] == fired["id"]
        # The next update of each of the others is the trigger's: none came for the limit
        # order, its cancel or the stop's placing.
        at, got = await trades.nth(quiet[trades.name])
        late["trigger: watch_my_trades"] = at - acted
        (trade,) = got
        assert (trade["side"], trade["order"], trade["amount"]) == ("sell", fired["id"], 0.01)
        at, got = await positions.nth(quiet[positions.name])
        late["trigger: watch_positions"] = at - acted
        (position,) = got
        assert (position["symbol"], position["contracts"]) == (SYMBOL, 0)  # closed
        at, got = await balance.nth(quiet[balance.name])
        late["trigger: watch_balance"] = at - acted
        assert got["USDT"]["total"] == await wallet()  # the realized loss and the fee

        assert max(late.values()) <= 1.0, late
        assert all(w.failed is None for w in watchers), [w.failed for w in watchers]
    finally:
        for watcher in watchers:
            watcher.task.cancel()
        await asyncio.gather(*(w.task for w in watchers), return_exceptions=True)
        await exchange.close()


async def test_a_deleted_portfolio_ends_its_stream(
    app: FastAPI, live_bot: Bot, live_url: str, user: User
) -> None:
    bot = live_bot
    key = await listen_key(bot)
    async with opened(f"{ws_base(live_url)}/private/ws?listenKey={key}") as ws:
        await listed(ws, key)
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
