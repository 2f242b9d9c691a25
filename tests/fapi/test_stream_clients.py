"""The other WebSocket clients of issue 35, unmodified, against the live server's streams:
python-binance 1.0.37 (futures user socket, multiplex socket), binance-futures-connector 4.2.0
(UMFuturesWebsocketClient: legacy /ws and SUBSCRIBE) and ccxt.pro's market watchers
(watch_ticker, watch_ohlcv and watch_order_book for a minute). ccxt.pro's user watchers are in
test_stream_lifecycle.py, the npm client in test_node_client.py."""

import asyncio
import itertools
import json
import queue
import threading
import time
import warnings
from typing import Any

import pytest
from ccxt.base.errors import ChecksumError
from fastapi import FastAPI

with warnings.catch_warnings():  # python-binance imports deprecated websockets APIs
    warnings.simplefilter("ignore", DeprecationWarning)
    from binance import AsyncClient, BinanceSocketManager  # type: ignore[import-untyped]
    from binance.um_futures import UMFutures  # type: ignore[import-untyped]
    from binance.websocket.um_futures.websocket_client import (  # type: ignore[import-untyped]
        UMFuturesWebsocketClient,
    )

from tests.fapi.helpers import Bot
from tests.fapi.test_streams import SYMBOL, ccxt_pro, streaming, ws_base
from tests.trading_api.helpers import set_price

MARKET = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"}
ONE_ORDER = ["ORDER_TRADE_UPDATE:NEW", "ORDER_TRADE_UPDATE:TRADE", "TRADE_LITE", "ACCOUNT_UPDATE"]


def kind(event: dict[str, Any]) -> str:
    execution = event.get("o", {}).get("x") if event["e"] == "ORDER_TRADE_UPDATE" else None
    return f"{event['e']}:{execution}" if execution else str(event["e"])


async def one_order(next_event: Any) -> list[dict[str, Any]]:
    """The events of one market order, up to its ACCOUNT_UPDATE."""
    seen: list[dict[str, Any]] = []
    async with asyncio.timeout(10):
        while not seen or seen[-1]["e"] != "ACCOUNT_UPDATE":
            seen.append(await next_event())
    return seen


# -- python-binance ----------------------------------------------------------------------------


async def test_python_binance_futures_user_and_multiplex_sockets(
    app: FastAPI, live_bot: Bot, live_url: str
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    client = AsyncClient(bot.api_key, bot.api_secret)
    client.FUTURES_URL = f"{live_url}/fapi"
    manager = BinanceSocketManager(client)
    manager.FSTREAM_URL = ws_base(live_url) + "/"  # trailing slash, as python-binance joins it
    try:
        async with manager.futures_user_socket() as user:
            await streaming(app, bot.portfolio_id)
            placed = await bot.ok("POST", "/v1/order", MARKET)
            events = await one_order(user.recv)
            assert [kind(e) for e in events] == ONE_ORDER
            assert {e["o"]["i"] for e in events[:2]} == {placed["orderId"]}
            assert events[1]["o"]["X"] == "FILLED" and events[1]["o"]["ps"] == "BOTH"
            assert events[3]["a"]["P"][0]["pa"] == "0.01"
            # python-binance re-POSTs the key every few minutes and expects the same one back
            again = await client.futures_stream_get_listen_key()
            assert again == user._listen_key

        market = manager.futures_multiplex_socket(["btcusdt@markPrice@1s", "!miniTicker@arr"])
        book = manager.futures_multiplex_socket(
            ["btcusdt@bookTicker", "btcusdt@depth10"], category="public"
        )
        got: dict[str, Any] = {}
        async with market as on_market, book as on_book:
            async with asyncio.timeout(10):
                while len(got) < 4:
                    for socket in (on_market, on_book):
                        message = await socket.recv()
                        got[message["stream"]] = message["data"]
        assert got["btcusdt@markPrice@1s"]["e"] == "markPriceUpdate"
        assert float(got["btcusdt@markPrice@1s"]["p"]) == 60000
        assert {t["s"] for t in got["!miniTicker@arr"]} >= {"BTCUSDT"}
        assert got["btcusdt@bookTicker"]["e"] == "bookTicker"
        assert len(got["btcusdt@depth10"]["b"]) == 10
    finally:
        await client.close_connection()


# -- binance-futures-connector ------------------------------------------------------------------


def connector_run(base: str, api_key: str, api_secret: str, order: Any) -> list[Any]:
    """The connector's own lifecycle: a listenKey over REST, then one /ws socket with SUBSCRIBEs
    (the user data by its key) and the messages its callback receives."""
    rest = UMFutures(key=api_key, secret=api_secret, base_url=base)
    listen_key = rest.new_listen_key()["listenKey"]
    received: queue.Queue[Any] = queue.Queue()
    opened = threading.Event()
    client = UMFuturesWebsocketClient(
        stream_url=ws_base(base),
        on_message=lambda _ws, text: received.put(json.loads(text)),
        on_open=lambda _ws: opened.set(),
    )
    try:
        assert opened.wait(5)
        client.user_data(listen_key=listen_key, id=1)
        client.mark_price(symbol="btcusdt", speed=1, id=2)
        client.diff_book_depth(symbol="btcusdt", speed=100, id=3)
        client.list_subscribe(id=4)
        messages: list[Any] = []
        deadline = time.monotonic() + 10
        while not any(m.get("id") == 4 for m in messages if isinstance(m, dict)):
            messages.append(received.get(timeout=deadline - time.monotonic()))
        assert rest.renew_listen_key(listenKey=listen_key) == {}
        order()
        while time.monotonic() < deadline and not (
            any(m.get("e") == "ACCOUNT_UPDATE" for m in messages)
            and any(m.get("e") == "markPriceUpdate" for m in messages)
            and any(m.get("e") == "depthUpdate" for m in messages)
        ):
            messages.append(received.get(timeout=max(0.01, deadline - time.monotonic())))
        assert rest.close_listen_key(listenKey=listen_key) == {}
        while not any(m.get("e") == "listenKeyExpired" for m in messages):
            messages.append(received.get(timeout=5))
        return messages
    finally:
        client.stop()


async def test_binance_futures_connector_websocket_client(
    app: FastAPI, live_bot: Bot, live_url: str
) -> None:
    bot = live_bot
    await set_price(app, "BTCUSDT", "60000")
    loop = asyncio.get_running_loop()

    def order() -> None:
        asyncio.run_coroutine_threadsafe(bot.ok("POST", "/v1/order", MARKET), loop).result(10)

    messages = await asyncio.to_thread(connector_run, live_url, bot.api_key, bot.api_secret, order)
    acks = {m["id"]: m["result"] for m in messages if "id" in m}
    assert acks[1] is None and acks[2] is None and acks[3] is None
    assert set(acks[4]) >= {"btcusdt@markPrice@1s", "btcusdt@depth@100ms"}
    events = [m for m in messages if "e" in m]
    user = [kind(e) for e in events if e["e"] not in ("markPriceUpdate", "depthUpdate")]
    assert user == [*ONE_ORDER, "listenKeyExpired"]
    assert any(e["e"] == "markPriceUpdate" and e["s"] == "BTCUSDT" for e in events)
    depth = [e for e in events if e["e"] == "depthUpdate"]
    assert all(b["pu"] == a["u"] for a, b in itertools.pairwise(depth))


# -- ccxt.pro ----------------------------------------------------------------------------------


MINUTE_S = 60.0  # the "run for a minute"
LONGEST_GAP_S = 5.0  # each stream is sent every second or faster: a few seconds is a stall


@pytest.mark.slow
async def test_ccxt_pro_watch_ticker_ohlcv_and_order_book_for_a_minute_without_a_resync(
    app: FastAPI, live_url: str, live_bot: Bot
) -> None:
    """watch_ticker (btcusdt@miniTicker, every second), watch_ohlcv (btcusdt@kline_1m, every
    second) and watch_order_book (btcusdt@depth@100ms on a REST snapshot, a diff with every
    quote: the simulated feed ticks every 100 ms and the mark moves every half second) run at
    once for a minute, as a bot runs them. ccxt's book resyncs on any gap in the U/u/pu chain:
    it raises ChecksumError to the watcher and starts over from a new REST snapshot. Neither
    may happen, and each watcher keeps yielding through the whole minute."""
    exchange = ccxt_pro(live_url, live_bot)
    mover: asyncio.Task[None] | None = None
    try:
        await exchange.load_markets()
        snapshots = 0
        fetch = exchange.fetch_rest_order_book_safe

        async def counted(*args: Any, **kwargs: Any) -> Any:
            nonlocal snapshots
            snapshots += 1
            return await fetch(*args, **kwargs)

        exchange.fetch_rest_order_book_safe = counted

        async def move() -> None:  # the book moves, so the diffs carry levels and zeros
            for n in itertools.count():
                await set_price(app, "BTCUSDT", str(60000 + (n % 7) * 3.5))
                await asyncio.sleep(0.5)

        mover = asyncio.create_task(move())
        resyncs: list[Exception] = []
        nonces: list[int] = []
        best_bids: set[float] = set()

        def book_ok(book: Any) -> None:
            nonces.append(book["nonce"])
            best_bids.add(book["bids"][0][0])
            assert book["bids"][0][0] < book["asks"][0][0]
            assert len(book["bids"]) == len(book["asks"]) == 1000

        def ticker_ok(ticker: Any) -> None:
            assert ticker["symbol"] == SYMBOL and ticker["last"] > 0

        def ohlcv_ok(candles: Any) -> None:
            assert candles and all(c[4] > 0 for c in candles)

        window: list[float] = []  # the minute's start and end, once every watcher has yielded
        yielded: set[Any] = set()

        async def keep(watch: Any, check: Any) -> list[float]:
            """Call the watcher again and again until the minute is over; the moments it
            yielded."""
            moments: list[float] = []
            while not window or time.monotonic() < window[1]:
                try:
                    value = await asyncio.wait_for(watch(), 10)
                except ChecksumError as exc:  # the book dropped: ccxt starts it over
                    resyncs.append(exc)
                    continue
                check(value)
                moments.append(time.monotonic())
                yielded.add(watch)
                if len(yielded) == 3 and not window:
                    window.extend([time.monotonic(), time.monotonic() + MINUTE_S])
            return moments

        async with asyncio.TaskGroup() as watching:  # one failing ends the others
            tickers = watching.create_task(keep(lambda: exchange.watch_ticker(SYMBOL), ticker_ok))
            candles = watching.create_task(
                keep(lambda: exchange.watch_ohlcv(SYMBOL, "1m"), ohlcv_ok)
            )
            books = watching.create_task(keep(lambda: exchange.watch_order_book(SYMBOL), book_ok))
        ticker, ohlcv, book = tickers.result(), candles.result(), books.result()
        assert not resyncs, f"the order book was resynced: {resyncs}"
        assert snapshots == 1, f"the order book was fetched {snapshots} times"
        assert nonces == sorted(nonces)
        assert len(best_bids) >= 5  # it followed the moving mark
        begin, end = window
        for name, moments in (("ticker", ticker), ("ohlcv", ohlcv), ("order book", book)):
            inside = [begin] + [m for m in moments if begin < m < end] + [end]
            gaps = [b - a for a, b in itertools.pairwise(inside)]
            assert max(gaps) <= LONGEST_GAP_S, (name, max(gaps), len(moments))
    finally:
        if mover is not None:
            mover.cancel()
        await exchange.close()
