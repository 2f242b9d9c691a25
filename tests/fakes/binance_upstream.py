"""A fake Binance USDⓈ-M market-data upstream on 127.0.0.1, for tests only.

REST (Starlette under uvicorn) answers ping, time, exchangeInfo, premiumIndex, ticker/24hr, klines
and fundingRate in Binance's shapes; a `websockets` server on a second port speaks the combined
stream protocol on Binance's routed paths only (`/market/stream?streams=...` for market streams,
`/public/stream?streams=...` for book data, `{"stream": ..., "data": ...}` frames). As Binance
since 2026-04-23, the unrouted root (`/stream?streams=...`, `/ws/...`) accepts the connection and
then stays silent. The test steers
it: push marks or last prices, drop every connection, stall (accept but stay silent), send garbage
frames, make REST paths fail with a status code, cut REST requests off unanswered.

Like any HTTP server (uvicorn's default, 5 s) it closes a kept-alive REST connection after it
stayed idle a while; a client may send a request on it at that very moment. cut() reproduces
that moment on demand, where waiting for the idle timeout would only race it.
"""

import asyncio
import contextlib
import socket
import struct
import time
from decimal import Decimal
from typing import Any

import orjson
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from papertrade.market.catalogue import catalogue, sim_profile

FUNDING_MS = 8 * 3_600_000
_INTERVALS = {"1m": 60_000, "5m": 300_000, "15m": 900_000, "1h": 3_600_000, "4h": 14_400_000}
_INTERVALS |= {"1d": 86_400_000}
GARBAGE = ("not json at all", "[1, 2", '{"stream": "x", "data": 5}', b"\x00\xff binary", "{}")


def _now() -> int:
    return time.time_ns() // 1_000_000


def _filters(symbol: str) -> dict[str, Any]:
    known = catalogue().get(symbol)
    tick, step = (str(known.tick_size), str(known.step_size)) if known else ("0.0001", "1")
    return {
        "symbol": symbol,
        "pair": symbol,
        "contractType": "PERPETUAL",
        "deliveryDate": 4133404800000,
        "onboardDate": known.onboard_date if known else 1700000000000,
        "status": "TRADING",
        "baseAsset": symbol.removesuffix("USDT"),
        "quoteAsset": "USDT",
        "marginAsset": "USDT",
        "pricePrecision": known.price_precision if known else 4,
        "quantityPrecision": known.quantity_precision if known else 0,
        "filters": [
            {
                "filterType": "PRICE_FILTER",
                "minPrice": tick,
                "maxPrice": "1000000",
                "tickSize": tick,
            },
            {"filterType": "LOT_SIZE", "minQty": step, "maxQty": "1000", "stepSize": step},
            {"filterType": "MARKET_LOT_SIZE", "minQty": step, "maxQty": "120", "stepSize": step},
            {"filterType": "MAX_NUM_ORDERS", "limit": 200},
            {"filterType": "MIN_NOTIONAL", "notional": "100" if symbol == "BTCUSDT" else "5"},
        ],
        "orderTypes": ["LIMIT", "MARKET"],
        "timeInForce": ["GTC", "IOC", "FOK", "GTX"],
    }


class FakeBinanceUpstream:
    """Loopback Binance: start(), steer it, stop(). `rest_url` and `ws_url` feed BinanceFeed."""

    def __init__(
        self,
        symbols: tuple[str, ...] = ("BTCUSDT", "ETHUSDT", "FOOUSDT"),
        *,
        auto_push_ms: int | None = None,
    ) -> None:
        # FOOUSDT is unknown to the catalogue on purpose (default brackets).
        self.marks = {
            s: Decimal(str(sim_profile(s).ref_price)) if s in catalogue() else Decimal("1.5")
            for s in symbols
        }
        self.funding_rate = Decimal("0.00010000")
        self.auto_push_ms = auto_push_ms
        self.failures: dict[str, int] = {}  # REST path -> HTTP status to answer
        self._cuts: list[tuple[bool, bool]] = []  # (reset, kept-alive only) for the next cuts
        self.cut_requests: list[str] = []  # REST paths of the requests cut off unanswered
        self._served: set[object] = set()  # uvicorn protocols (connections) that answered once
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.stalled = False
        self.connect_count = 0
        self.stream_paths: list[str] = []
        self.root_paths: list[str] = []  # connections on the retired unrouted root (silent)
        self._clients: set[ServerConnection] = set()  # on /market (where marks are sent)
        self._public: set[ServerConnection] = set()  # on /public (book data: nothing here)
        self._http: uvicorn.Server | None = None
        self._http_task: asyncio.Task[None] | None = None
        self._ws: Server | None = None
        self._pusher: asyncio.Task[None] | None = None
        self.rest_url = self.ws_url = ""

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Listen on two free loopback ports (REST and WebSocket)."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        config = uvicorn.Config(
            self._app(), log_level="warning", lifespan="off", timeout_graceful_shutdown=1
        )
        self._http = uvicorn.Server(config)
        self._http_task = asyncio.create_task(self._http.serve(sockets=[sock]))
        for _ in range(3000):
            if self._http.started:
                break
            await asyncio.sleep(0.01)
        self.rest_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._ws = await serve(self._on_connect, "127.0.0.1", 0)
        port = next(iter(self._ws.sockets)).getsockname()[1]
        self.ws_url = f"ws://127.0.0.1:{port}"
        if self.auto_push_ms:
            self._pusher = asyncio.create_task(self._auto_push())

    async def stop(self) -> None:
        """Close every connection and both servers."""
        if self._pusher is not None:
            self._pusher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._pusher
        if self._ws is not None:
            self._ws.close()
            await self._ws.wait_closed()
        if self._http is not None and self._http_task is not None:
            self._http.should_exit = True
            await self._http_task

    # -- steering --------------------------------------------------------------------------------

    def mark_event(
        self, symbol: str, mark: Decimal, index: Decimal | None = None
    ) -> dict[str, Any]:
        """A markPriceUpdate item as Binance sends it."""
        return {
            "e": "markPriceUpdate",
            "E": _now(),
            "s": symbol,
            "p": str(mark),
            "i": str(index if index is not None else mark),
            "P": str(mark),
            "r": str(self.funding_rate),
            "T": (_now() // FUNDING_MS + 1) * FUNDING_MS,
        }

    async def broadcast(self, frame: str | bytes) -> int:
        """Send one frame to every connected client unless stalled; returns how many got it."""
        if self.stalled:
            return 0
        sent = 0
        for client in list(self._clients):
            with contextlib.suppress(ConnectionClosed):
                await client.send(frame)
                sent += 1
        return sent

    async def push_mark(
        self, symbol: str, mark: Decimal | str, index: Decimal | None = None
    ) -> int:
        """Set a symbol's mark and stream it in a !markPrice@arr@1s frame."""
        self.marks[symbol] = Decimal(mark)
        data = [self.mark_event(symbol, Decimal(mark), index)]
        return await self.broadcast(orjson.dumps({"stream": "!markPrice@arr@1s", "data": data}))

    async def push_last(self, symbol: str, price: Decimal | str) -> int:
        """Stream a last traded price in a !miniTicker@arr frame."""
        item = {"e": "24hrMiniTicker", "E": _now(), "s": symbol, "c": str(price), "o": str(price)}
        return await self.broadcast(orjson.dumps({"stream": "!miniTicker@arr", "data": [item]}))

    async def send_garbage(self) -> int:
        """Frames no Binance client should choke on: non-JSON, wrong shapes, binary."""
        return sum([await self.broadcast(frame) for frame in GARBAGE])

    async def drop_connections(self) -> None:
        """Cut every WebSocket connection abruptly (no close handshake)."""
        for client in list(self._clients):
            client.transport.abort()

    def stall(self, on: bool = True) -> None:
        """Keep accepting connections but send nothing while `on`."""
        self.stalled = on

    def fail(self, path: str, status: int = 500) -> None:
        """Answer every request to `path` (e.g. "/fapi/v1/klines") with `status`."""
        self.failures[path] = status

    def heal(self) -> None:
        """Stop failing REST paths and cutting requests."""
        self.failures.clear()
        self._cuts.clear()

    def cut(self, count: int = 1, *, reset: bool = True, kept_alive_only: bool = True) -> None:
        """Close the connection of each of the next `count` REST requests instead of answering,
        as a server closing an idle kept-alive connection just as the request arrives on it.

        `reset`: with a TCP RST (the client reads ECONNRESET: what a socket closed with the
        request unread sends), else with a FIN (the client reads the end of the stream where
        the response should be). `kept_alive_only`: only requests on a connection that already
        answered one are cut (a new connection's request is answered), else every request.
        """
        self._cuts.extend([(reset, kept_alive_only)] * count)

    async def wait_for_connections(self, count: int = 1, within: float = 15.0) -> None:
        """Wait until `count` connections were accepted in total and one is open."""
        async with asyncio.timeout(within):
            # Polling: connections come and go from the server's own tasks.
            while self.connect_count < count or not self._clients:  # noqa: ASYNC110
                await asyncio.sleep(0.01)

    # -- WebSocket -------------------------------------------------------------------------------

    async def _on_connect(self, client: ServerConnection) -> None:
        path = client.request.path if client.request else ""
        route, _, rest = path.lstrip("/").partition("/")
        if route not in ("market", "public"):
            if path.startswith(("/stream?streams=", "/ws/")):
                self.root_paths.append(path)  # acknowledged, never fed (Binance since 2026-04)
                await client.wait_closed()
            else:
                await client.close(1008, "use /market or /public")
            return
        if not rest.startswith(("stream?streams=", "ws/")):
            await client.close(1008, "use /<route>/stream?streams= or /<route>/ws/")
            return
        self.connect_count += 1
        self.stream_paths.append(path)
        clients = self._clients if route == "market" else self._public
        clients.add(client)
        try:
            await client.wait_closed()
        finally:
            clients.discard(client)

    async def _auto_push(self) -> None:
        assert self.auto_push_ms
        while True:
            await asyncio.sleep(self.auto_push_ms / 1000)
            data = [self.mark_event(s, m) for s, m in self.marks.items()]
            await self.broadcast(orjson.dumps({"stream": "!markPrice@arr@1s", "data": data}))

    # -- REST ------------------------------------------------------------------------------------

    def _app(self) -> Starlette:
        routes = {
            "/fapi/v1/ping": self._ping,
            "/fapi/v1/time": self._time,
            "/fapi/v1/exchangeInfo": self._exchange_info,
            "/fapi/v1/premiumIndex": self._premium_index,
            "/fapi/v1/ticker/24hr": self._ticker,
            "/fapi/v1/klines": self._klines,
            "/fapi/v1/fundingRate": self._funding,
        }
        return Starlette(routes=[Route(p, self._wrap(h)) for p, h in routes.items()])

    def _wrap(self, handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            params = dict(request.query_params)
            self.requests.append((request.url.path, params))
            if await self._cut_off(request):
                return Response(status_code=500)  # not sent: the connection is gone
            status = self.failures.get(request.url.path)
            if status is not None:
                body = {"code": -1000, "msg": "An unknown error occurred while processing."}
                return JSONResponse(body, status_code=status)
            symbol = params.get("symbol")
            if symbol is not None and symbol not in self.marks:
                return JSONResponse({"code": -1121, "msg": "Invalid symbol."}, status_code=400)
            return JSONResponse(handler(params))

        return endpoint

    async def _cut_off(self, request: Request) -> bool:
        """Cut this request's connection if cut() asked for it; True when it was cut."""
        assert self._http is not None
        peer = (request.client.host, request.client.port) if request.client else None
        # uvicorn's HTTP protocol objects, one a connection (the WebSocket kinds have no client)
        found = [c for c in self._http.server_state.connections if getattr(c, "client", 0) == peer]
        if len(found) != 1:
            return False
        connection: Any = found[0]
        kept_alive = connection in self._served
        self._served.add(connection)
        if not self._cuts or (self._cuts[0][1] and not kept_alive):
            return False
        reset, _ = self._cuts.pop(0)
        self.cut_requests.append(request.url.path)
        transport = connection.transport
        if reset:  # SO_LINGER 0: close() sends RST, not FIN
            linger = struct.pack("ii", 1, 0)
            transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, linger
            )
            transport.abort()
        else:
            transport.close()
        await asyncio.sleep(0)  # the connection is lost (uvicorn then sends nothing)
        return True

    def _ping(self, params: dict[str, str]) -> Any:
        return {}

    def _time(self, params: dict[str, str]) -> Any:
        return {"serverTime": _now()}

    def _exchange_info(self, params: dict[str, str]) -> Any:
        symbols = [_filters(s) for s in self.marks]
        quarterly = _filters("BTCUSDT") | {
            "symbol": "BTCUSDT_261225",
            "contractType": "CURRENT_QUARTER",
        }
        settled = _filters("OLDUSDT") | {"status": "SETTLING"}
        return {"timezone": "UTC", "serverTime": _now(), "symbols": [*symbols, quarterly, settled]}

    def _premium_one(self, symbol: str) -> dict[str, Any]:
        mark = self.marks[symbol]
        return {
            "symbol": symbol,
            "markPrice": str(mark),
            "indexPrice": str(mark),
            "estimatedSettlePrice": str(mark),
            "lastFundingRate": str(self.funding_rate),
            "interestRate": "0.00010000",
            "nextFundingTime": (_now() // FUNDING_MS + 1) * FUNDING_MS,
            "time": _now(),
        }

    def _premium_index(self, params: dict[str, str]) -> Any:
        if "symbol" in params:
            return self._premium_one(params["symbol"])
        return [self._premium_one(s) for s in self.marks]

    def _ticker(self, params: dict[str, str]) -> Any:
        def one(symbol: str) -> dict[str, Any]:
            mark = self.marks[symbol]
            now = _now()
            return {
                "symbol": symbol,
                "priceChange": "0",
                "priceChangePercent": "0.000",
                "weightedAvgPrice": str(mark),
                "lastPrice": str(mark),
                "lastQty": "1",
                "openPrice": str(mark),
                "highPrice": str(mark * 2),
                "lowPrice": str(mark / 2),
                "volume": "1000",
                "quoteVolume": str(mark * 1000),
                "openTime": now - 86_400_000,
                "closeTime": now,
                "firstId": 1,
                "lastId": 500,
                "count": 500,
            }

        return one(params["symbol"]) if "symbol" in params else [one(s) for s in self.marks]

    def _klines(self, params: dict[str, str]) -> Any:
        step = _INTERVALS[params["interval"]]
        limit = int(params.get("limit", 500))
        end = int(params.get("endTime", _now()))
        if "startTime" in params:
            first = -(-int(params["startTime"]) // step) * step
            opens = [t for t in range(first, first + limit * step, step) if t <= end]
        else:
            last = end // step * step
            opens = list(range(last - (limit - 1) * step, last + 1, step))
        mark = self.marks[params["symbol"]]
        rows = []
        for t in opens:
            price = mark + (t // step) % 7
            ohlc = [str(price), str(price + 1), str(price - 1), str(price)]
            rows.append(
                [t, *ohlc, "10", t + step - 1, str(price * 10), 42, "5", str(price * 5), "0"]
            )
        return rows

    def _funding(self, params: dict[str, str]) -> Any:
        limit = int(params.get("limit", 100))
        end = int(params.get("endTime", _now())) // FUNDING_MS * FUNDING_MS
        times = list(range(end - (limit - 1) * FUNDING_MS, end + 1, FUNDING_MS))
        if "startTime" in params:
            times = [t for t in times if t >= int(params["startTime"])]
        symbol, mark = params["symbol"], str(self.marks[params["symbol"]])
        return [
            {
                "symbol": symbol,
                "fundingRate": str(self.funding_rate),
                "fundingTime": t,
                "markPrice": mark,
            }
            for t in times
        ]
