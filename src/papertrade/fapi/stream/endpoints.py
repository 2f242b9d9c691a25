"""The Binance-compatible WebSocket paths (at the root and under {LEGACY_PREFIX}/binance).

`/ws[/<streams>]` and `/stream?streams=` (legacy root), `/public/…`, `/market/…` (market streams;
any stream is served on any route), `/private/ws?listenKey=K[&events=…]` and
`/private/stream?listenKey=K&events=…` (user data). See docs/fapi-ws.md.
"""

import asyncio
import contextlib
import time
from collections import deque
from typing import Any

import orjson
from fastapi import APIRouter
from starlette.websockets import WebSocket

from papertrade.fapi.stream import market as mk
from papertrade.fapi.stream.keys import looks_like_key
from papertrade.fapi.stream.service import BinanceStreams, Conn
from papertrade.ws.client import Client
from papertrade.ws.frames import dumps

router = APIRouter(include_in_schema=False)
METHODS = ("SUBSCRIBE", "UNSUBSCRIBE", "LIST_SUBSCRIPTIONS", "SET_PROPERTY", "GET_PROPERTY")
EVENT_NAMES = frozenset(
    {
        "ORDER_TRADE_UPDATE",
        "TRADE_LITE",
        "ACCOUNT_UPDATE",
        "ACCOUNT_CONFIG_UPDATE",
        "ALGO_UPDATE",
        "MARGIN_CALL",
        "listenKeyExpired",
    }
)


def _service(websocket: WebSocket) -> BinanceStreams | None:
    found = getattr(websocket.app.state, "binance_streams", None)
    return found if isinstance(found, BinanceStreams) else None


def _events(text: str | None) -> frozenset[str] | None:
    if not text:
        return None
    names = frozenset(n.strip() for n in text.replace(",", "/").split("/") if n.strip())
    # listenKeyExpired always goes out: a client must learn its key is gone.
    return names | {"listenKeyExpired"}


async def _serve(websocket: WebSocket, *, combined: bool, private: bool, names: list[str]) -> None:
    service = _service(websocket)
    if service is None:
        await websocket.close(code=1013, reason="not ready")
        return
    settings = service.ctx.settings
    await websocket.accept()
    client = Client(websocket, max_buffer=settings.ws_max_buffer_bytes)
    client.handler = asyncio.current_task()
    conn = Conn(client, combined, private)
    service.attach(conn)
    try:
        if private:
            keys = websocket.query_params.getlist("listenKey")
            events = websocket.query_params.getlist("events")
            for n, key in enumerate(keys):
                found = await service.keys.lookup(key)
                if found is not None:
                    service.add_user(conn, found, _events(events[n] if n < len(events) else None))
            if not conn.users:
                service.close(conn, 1008, "This listenKey does not exist.")
        for name in names[: settings.fapi_ws_max_streams]:
            await _add(service, conn, name, from_path=True)
        await _converse(service, conn)
    except asyncio.CancelledError:
        if not client.dropped:
            raise
    finally:
        service.detach(conn)


async def _add(service: BinanceStreams, conn: Conn, name: str, *, from_path: bool = False) -> None:
    """One name of a SUBSCRIBE or a path: a live listenKey, else a market stream (unknown names
    are accepted and stay silent, as on Binance)."""
    if looks_like_key(name):
        found = await service.keys.lookup(name)
        if found is not None:
            service.add_user(conn, found, None)
            return
    stream = mk.parse_stream(name)
    if stream is None:
        if not from_path:  # a path segment that names nothing (ccxt's `/ws/0`) is ignored
            conn.streams.setdefault(name.lower(), name)  # listed, never fed
        return
    service.subscribe(conn, stream, name)


def _error(code: int, msg: str, request_id: Any) -> bytes:
    return dumps({"error": {"code": code, "msg": msg}, "id": request_id})


async def _converse(service: BinanceStreams, conn: Conn) -> None:
    settings = service.ctx.settings
    websocket = conn.client.websocket
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.fapi_ws_max_lifetime_s
    recent: deque[float] = deque()
    limit = settings.fapi_ws_max_messages_per_s
    while True:
        try:
            async with asyncio.timeout_at(deadline):
                message = await websocket.receive()
        except TimeoutError:  # Binance's 24-hour limit: the client reconnects
            service.hub.flush_now()
            await conn.client.close(1000, "connection lifetime reached")
            return
        if message["type"] == "websocket.disconnect":
            return
        now = time.monotonic()
        recent.append(now)
        while recent and recent[0] <= now - 1.0:
            recent.popleft()
        if len(recent) > limit:  # Binance disconnects a connection over its message rate
            service.hub.flush_now()
            await conn.client.close(1008, "Too many messages")
            return
        text = message.get("text")
        if text is None:
            with contextlib.suppress(UnicodeDecodeError):
                text = (message.get("bytes") or b"").decode()
        service.hub.send(conn.client, await _handle(service, conn, text or ""))


async def _handle(service: BinanceStreams, conn: Conn, text: str) -> bytes:
    try:
        request = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return _error(3, f"Invalid JSON: {exc}"[:200], None)
    if not isinstance(request, dict):
        return _error(2, "Invalid request: expected a JSON object", None)
    request_id = request.get("id")
    if request_id is not None and not (
        isinstance(request_id, str)
        or (isinstance(request_id, int) and not isinstance(request_id, bool) and request_id >= 0)
    ):
        return _error(2, "Invalid request: request ID must be an unsigned integer", None)
    method = request.get("method")
    if method is None:
        return _error(2, "Invalid request: missing field `method`", request_id)
    if method not in METHODS:
        return _error(
            2,
            f"Invalid request: unknown variant `{method}`, expected one of "
            + ", ".join(f"`{m}`" for m in METHODS),
            request_id,
        )
    params = request.get("params", [])
    if method == "LIST_SUBSCRIPTIONS":
        names = [*conn.streams.values(), *conn.users]
        return dumps({"result": names, "id": request_id})
    if not isinstance(params, list):
        return _error(2, "Invalid request: params must be an array", request_id)
    if method in ("SUBSCRIBE", "UNSUBSCRIBE"):
        return await _subscription(service, conn, method, params, request_id)
    return _property(service, conn, method, params, request_id)


async def _subscription(
    service: BinanceStreams, conn: Conn, method: str, params: list[Any], request_id: Any
) -> bytes:
    if not all(isinstance(p, str) and 0 < len(p) <= 200 for p in params):
        return _error(2, "Invalid request: params must be stream names", request_id)
    if method == "SUBSCRIBE":
        fresh = [p for p in params if p.lower() not in conn.streams and p not in conn.users]
        total = len(conn.streams) + len(conn.users) + len(set(fresh))
        if total > service.ctx.settings.fapi_ws_max_streams:
            return _error(
                2,
                "Invalid request: too many streams; at most "
                f"{service.ctx.settings.fapi_ws_max_streams} per connection",
                request_id,
            )
        for name in fresh:
            await _add(service, conn, name)
    else:
        for name in params:
            if name in conn.users:
                service.remove_user(conn, name)
            else:
                service.unsubscribe(conn, name.lower())
    return dumps({"result": None, "id": request_id})


def _property(
    service: BinanceStreams, conn: Conn, method: str, params: list[Any], request_id: Any
) -> bytes:
    if not params or not isinstance(params[0], str):
        return _error(2, "Invalid request: property name must be a string", request_id)
    if params[0] != "combined":
        return _error(0, "Unknown property", request_id)
    if method == "GET_PROPERTY":
        return dumps({"result": conn.combined, "id": request_id})
    if len(params) != 2:
        return _error(
            2,
            "Invalid request: too many parameters"
            if len(params) > 2
            else "Invalid request: missing the value",
            request_id,
        )
    if not isinstance(params[1], bool):
        return _error(1, "Invalid value type: expected Boolean", request_id)
    service.set_combined(conn, params[1])
    return dumps({"result": None, "id": request_id})


def _names(rest: str) -> list[str]:
    return [n for n in rest.split("/") if n]


def _stream_names(websocket: WebSocket) -> list[str]:
    return [n for n in websocket.query_params.get("streams", "").split("/") if n]


@router.websocket("/ws")
async def raw_root(websocket: WebSocket) -> None:
    await _serve(websocket, combined=False, private=False, names=[])


@router.websocket("/ws/{rest:path}")
async def raw_named(websocket: WebSocket, rest: str) -> None:
    await _serve(websocket, combined=False, private=False, names=_names(rest))


@router.websocket("/stream")
async def combined_root(websocket: WebSocket) -> None:
    await _serve(websocket, combined=True, private=False, names=_stream_names(websocket))


for _route in ("public", "market"):

    @router.websocket(f"/{_route}/ws")
    async def routed_raw(websocket: WebSocket) -> None:
        await _serve(websocket, combined=False, private=False, names=[])

    @router.websocket(f"/{_route}/ws/{{rest:path}}")
    async def routed_named(websocket: WebSocket, rest: str) -> None:
        await _serve(websocket, combined=False, private=False, names=_names(rest))

    @router.websocket(f"/{_route}/stream")
    async def routed_combined(websocket: WebSocket) -> None:
        await _serve(websocket, combined=True, private=False, names=_stream_names(websocket))


@router.websocket("/private/ws")
async def private_raw(websocket: WebSocket) -> None:
    await _serve(websocket, combined=False, private=True, names=[])


@router.websocket("/private/ws/{rest:path}")
async def private_raw_named(websocket: WebSocket, rest: str) -> None:
    await _serve(websocket, combined=False, private=True, names=[])


@router.websocket("/private/stream")
async def private_combined(websocket: WebSocket) -> None:
    await _serve(websocket, combined=True, private=True, names=_stream_names(websocket))
