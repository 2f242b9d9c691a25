"""The /fapi router (mounted at /fapi and at {LEGACY_PREFIX}/binance/fapi).

Every path below /fapi answers in Binance's shape: the endpoints, the ones the spec excludes
(a clear "not supported"), and any other path or method (Binance's -5000).
"""

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter
from starlette.requests import Request
from starlette.responses import Response

from papertrade.fapi.dispatch import REGISTRY, Call, Endpoint, route_handler
from papertrade.fapi.endpoints import account, algo, batch, listenkey, market, trade
from papertrade.fapi.errors import FapiError, unsupported

ENDPOINT_MODULES = (market, account, trade, batch, algo, listenkey)  # importing them fills REGISTRY
ALL_METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]

# Excluded by the spec (or not offered by a paper market): path → why.
UNSUPPORTED = {
    "/v1/countdownCancelAll": "Auto-cancel countdowns are not supported.",
    "/v1/orderAmendment": "Order modification is not supported; cancel and place again.",
    "/v1/openInterest": "Open interest data is not available.",
    "/v1/aggTrades": "Public trade data is not available.",
    "/v1/trades": "Public trade data is not available.",
    "/v1/historicalTrades": "Public trade data is not available.",
    "/v1/adlQuantile": "Auto-deleveraging is not simulated.",
    "/v1/apiTradingStatus": "Trading quantitative rules are not simulated.",
    "/v1/convert/getQuote": "Convert is not supported.",
}
# Methods that are not supported on paths that otherwise are.
UNSUPPORTED_METHODS = {
    ("PUT", "/v1/order"): "Order modification is not supported; cancel and place again.",
    ("PUT", "/v1/batchOrders"): "Order modification is not supported; cancel and place again.",
}


def _unsupported_handler(reason: str) -> Any:
    async def handler(call: Call) -> Any:
        raise unsupported(reason)

    return handler


def _path_not_found(known: dict[str, object]) -> Any:
    async def handler(call: Call) -> Any:
        path = call.request.url.path
        shown = path if len(path) <= 120 else path[:120] + "…"
        method = call.request.method
        relative = "/" + call.request.path_params.get("rest", "")
        status = 405 if relative in known else 404
        raise FapiError(status, -5000, f"Path {shown}, Method {method} is invalid")

    return handler


Table = dict[str, dict[str, Callable[[Request], Awaitable[Response]]]]


def _table() -> Table:
    """path below /fapi → method → handler, for every endpoint and every refusal."""
    specs = list(REGISTRY)
    specs += [
        Endpoint((method,), path, _unsupported_handler(reason), False, 1)
        for (method, path), reason in UNSUPPORTED_METHODS.items()
    ]
    specs += [
        Endpoint(tuple(ALL_METHODS), path, _unsupported_handler(reason), False, 1)
        for path, reason in UNSUPPORTED.items()
    ]
    table: Table = {}
    for spec in specs:
        handler = route_handler(spec)
        methods = table.setdefault(spec.path, {})
        for method in spec.methods:
            methods.setdefault(method, handler)
        if "GET" in spec.methods:
            methods.setdefault("HEAD", handler)
    return table


_HANDLERS: Table = {}


def handler_for(method: str, path: str) -> Callable[[Request], Awaitable[Response]]:
    """The handler the router runs for `method` at `path` below /fapi (the WebSocket API runs
    the REST endpoints through it): an endpoint, a refusal, or the -5000 of an unknown path."""
    if not _HANDLERS:
        _HANDLERS.update(_table())
    found = _HANDLERS.get(path, {}).get(method)
    if found is None:
        raise KeyError(f"{method} {path} is not a /fapi endpoint")
    return found


def build_router() -> APIRouter:
    """One route per mount: a dictionary lookup beats matching ~80 path patterns in turn."""
    table = _table()
    not_found = route_handler(
        Endpoint(tuple(ALL_METHODS), "/{rest:path}", _path_not_found(dict(table)), False, 1)
    )

    async def dispatch(request: Request) -> Response:
        methods = table.get("/" + request.path_params["rest"])
        handler = methods.get(request.method) if methods else None
        return await (handler or not_found)(request)

    router = APIRouter(include_in_schema=False)
    router.add_route("/{rest:path}", dispatch, methods=[*ALL_METHODS, "HEAD"], name="fapi")
    return router


def endpoints() -> list[tuple[str, str]]:
    """(method, path below /fapi) of every implemented endpoint, for tests and docs."""
    return sorted({(m, spec.path) for spec in REGISTRY for m in spec.methods})


FOREIGN = {
    "/dapi": "COIN-margined futures (/dapi) are not supported; Papertrade simulates USDT-margined "
    "perpetuals under /fapi.",
    "/eapi": "Options (/eapi) are not supported; Papertrade simulates USDT-margined perpetuals "
    "under /fapi.",
    "/sapi": "Spot and wallet endpoints (/sapi) are not supported. With ccxt, set the option "
    "fetchCurrencies to false.",
    "/papi": "Portfolio margin (/papi) is not supported.",
}


def build_foreign_router() -> APIRouter:
    """Binance-shaped refusals for other Binance products, mounted at the root by the app."""
    router = APIRouter(include_in_schema=False)
    spot = "Spot (/api/v3) is not supported; Papertrade simulates USDT-margined perpetuals."
    for prefix, reason in {**FOREIGN, "/api/v3": spot}.items():
        spec = Endpoint(
            tuple(ALL_METHODS), f"{prefix}/{{rest:path}}", _unsupported_handler(reason), False, 1
        )
        router.add_route(spec.path, route_handler(spec), methods=[*ALL_METHODS, "HEAD"])
    return router
