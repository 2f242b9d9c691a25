"""Binance's WebSocket API for USDⓈ-M futures (`/ws-fapi/v1`; docs/fapi-ws.md).

Requests are JSON text frames `{"id", "method", "params"}`, each signed on its own (HMAC over
its parameters sorted by name, `apiKey` among them). Every method runs the REST endpoint's own
handler (fapi/routes.py) on a request made from the frame, so parameters, signatures, replays,
weights, order limits and errors are exactly the REST ones. The answer is
`{"id", "status": 200, "result", "rateLimits"}` or `{"id", "status", "error": {"code", "msg"}}`.
A connection handles its requests one at a time, in the order they came: it reads the next frame
only once it has answered the last. There is no frame rate of its own (unlike the streams'): each
request is charged its weight and orders, as over REST.
"""

import asyncio
from typing import Any
from urllib.parse import urlencode

import orjson
from fastapi import APIRouter
from starlette.requests import Request
from starlette.websockets import WebSocket, WebSocketDisconnect

from papertrade.context import AppContext
from papertrade.fapi.errors import UNKNOWN_ERROR
from papertrade.fapi.params import MAX_PARAMS, json_value_text
from papertrade.fapi.routes import handler_for

router = APIRouter(include_in_schema=False)
MAX_FRAME = 65_536
# method → the REST endpoint (method, path below /fapi) that answers it
METHODS = {
    "order.place": ("POST", "/v1/order"),
    "order.cancel": ("DELETE", "/v1/order"),
    "order.status": ("GET", "/v1/order"),
    "order.modify": ("PUT", "/v1/order"),  # answered as REST answers it: not supported
    "openOrders.status": ("GET", "/v1/openOrders"),
    "algoOrder.place": ("POST", "/v1/algoOrder"),
    "algoOrder.cancel": ("DELETE", "/v1/algoOrder"),
    "account.status": ("GET", "/v2/account"),
    "v2/account.status": ("GET", "/v3/account"),
    "account.balance": ("GET", "/v2/balance"),
    "v2/account.balance": ("GET", "/v3/balance"),
    "account.position": ("GET", "/v2/positionRisk"),
    "v2/account.position": ("GET", "/v3/positionRisk"),
    "ticker.price": ("GET", "/v2/ticker/price"),
    "ticker.book": ("GET", "/v1/ticker/bookTicker"),
    "depth": ("GET", "/v1/depth"),
    "userDataStream.start": ("POST", "/v1/listenKey"),
    "userDataStream.ping": ("PUT", "/v1/listenKey"),
    "userDataStream.stop": ("DELETE", "/v1/listenKey"),
}
# Headers of the handshake a request made from a frame keeps (the client's address behind a
# trusted proxy, what it says it is).
KEPT_HEADERS = {b"x-forwarded-for", b"x-real-ip", b"forwarded", b"user-agent"}


def _error(request_id: Any, status: int, code: int, msg: str) -> dict[str, Any]:
    return {"id": request_id, "status": status, "error": {"code": code, "msg": msg}}


def _query(values: dict[str, str]) -> bytes:
    """The signed parameters as a query string the REST handler reads and checks: sorted by
    name, `k=v&…` with the values as they are (what ccxt and python-binance sign), the signature
    last. A value holding a character a query string must encode is sent encoded, so it reads
    back whole; a signature over its raw form then fails (-1022). No parameter Binance defines
    takes such a character."""
    signed = sorted((k, v) for k, v in values.items() if k != "signature")
    plain = all(not set(k + v) & set("&=+%#") for k, v in signed)
    text = "&".join(f"{k}={v}" for k, v in signed) if plain else urlencode(signed)
    if "signature" in values:
        text += "&" + urlencode({"signature": values["signature"]})
    return text.encode()


def _request(websocket: WebSocket, method: str, path: str, values: dict[str, str]) -> Request:
    headers = [(n, v) for n, v in websocket.scope.get("headers", []) if n in KEPT_HEADERS]
    if values.get("apiKey"):
        headers.append((b"x-mbx-apikey", values["apiKey"].encode("utf-8", "replace")))
    scope = {
        "type": "http",
        "asgi": websocket.scope.get("asgi", {}),
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": "/fapi" + path,
        "raw_path": ("/fapi" + path).encode(),
        "root_path": "",
        "query_string": _query(values),
        "headers": headers,
        "client": websocket.scope.get("client"),
        "server": websocket.scope.get("server"),
        "app": websocket.scope["app"],
        "path_params": {},
        "state": {"raw_body": b""},  # everything is in the query string
    }
    return Request(scope)


def _rate_limits(ctx: AppContext, headers: Any) -> list[dict[str, Any]]:
    """Binance's `rateLimits` from the counters the REST answer carries in its headers."""
    settings = ctx.settings
    found = []
    for header, kind, interval, count, limit in (
        (
            "x-mbx-used-weight-1m",
            "REQUEST_WEIGHT",
            "MINUTE",
            1,
            settings.rate_limit_compat_weight_per_min,
        ),
        (
            "x-mbx-order-count-10s",
            "ORDERS",
            "SECOND",
            10,
            settings.rate_limit_compat_orders_per_10s,
        ),
        ("x-mbx-order-count-1m", "ORDERS", "MINUTE", 1, settings.rate_limit_compat_orders_per_min),
    ):
        used = headers.get(header)
        if used is not None and used.isdigit():
            found.append(
                {
                    "rateLimitType": kind,
                    "interval": interval,
                    "intervalNum": count,
                    "limit": limit,
                    "count": int(used),
                }
            )
    return found


async def answer(websocket: WebSocket, text: str) -> dict[str, Any]:
    """The answer to one frame."""
    ctx: AppContext = websocket.app.state.ctx
    if len(text) > MAX_FRAME:
        return _error(None, 400, -1101, f"A request is at most {MAX_FRAME} characters.")
    try:
        frame = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _error(None, 400, -1100, "The request is not valid JSON.")
    if not isinstance(frame, dict):
        return _error(None, 400, -1100, "A request is a JSON object: id, method, params.")
    request_id = frame.get("id")
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        request_id = None
    method = frame.get("method")
    params = frame.get("params", {})
    if not isinstance(method, str) or method not in METHODS:
        shown = str(method)[:60]
        return _error(request_id, 400, -1020, f"This operation is not supported. ({shown})")
    if not isinstance(params, dict) or len(params) > MAX_PARAMS:
        return _error(request_id, 400, -1101, f"params is an object of at most {MAX_PARAMS}.")
    values: dict[str, str] = {}
    for name, value in params.items():
        text_value = json_value_text(value)
        if text_value is None:
            return _error(
                request_id, 400, -1130, f"Data sent for parameter '{name[:40]}' is not valid."
            )
        values[name] = text_value
    rest_method, path = METHODS[method]
    handler = handler_for(rest_method, path)
    response = await handler(_request(websocket, rest_method, path, values))
    try:
        body = orjson.loads(response.body)
    except orjson.JSONDecodeError:  # every endpoint answers JSON; never leave a request unanswered
        body = {"code": -1000, "msg": UNKNOWN_ERROR}
    reply: dict[str, Any] = {"id": request_id, "status": response.status_code}
    if response.status_code == 200:
        reply["result"] = body
    else:
        reply["error"] = body
    if values.get("returnRateLimits", "true") != "false":
        reply["rateLimits"] = _rate_limits(ctx, response.headers)
    return reply


@router.websocket("/ws-fapi/v1")
async def websocket_api(websocket: WebSocket) -> None:
    ctx: AppContext = websocket.app.state.ctx
    settings = ctx.settings
    await websocket.accept()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.fapi_ws_max_lifetime_s
    try:
        while True:
            try:
                async with asyncio.timeout_at(deadline):
                    message = await websocket.receive()
            except TimeoutError:  # Binance's 24-hour limit: the client reconnects
                await websocket.close(1000, "connection lifetime reached")
                return
            if message["type"] == "websocket.disconnect":
                return
            text = message.get("text")
            if text is None:
                text = (message.get("bytes") or b"").decode("utf-8", "replace")
            await websocket.send_text(orjson.dumps(await answer(websocket, text)).decode())
    except WebSocketDisconnect:
        return
