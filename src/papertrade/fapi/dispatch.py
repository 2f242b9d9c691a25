"""How a /fapi endpoint runs: parameters, signing, weight, the handler, Binance-shaped errors.

Endpoints are plain Starlette routes (no FastAPI parameter parsing): Binance merges query string
and form body, signs the raw bytes, and must never answer with a framework-shaped error.
"""

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.fapi.auth import Caller, Meter, authenticate, charge, client_ip
from papertrade.fapi.errors import FapiJSONResponse, error_response
from papertrade.fapi.params import Params
from papertrade.faults.outage import as_unavailable
from papertrade.trading.errors import TradingRuleError

log = logging.getLogger("papertrade.fapi")
Weight = int | Callable[[Params], int]


@dataclass
class Call:
    """One request as an endpoint sees it."""

    request: Request
    ctx: AppContext
    params: Params
    caller: Caller | None
    meter: Meter

    @property
    def principal(self) -> Principal:
        assert self.caller is not None, "signed endpoints only"
        return self.caller.principal

    @property
    def portfolio_id(self) -> int:
        assert self.caller is not None, "signed endpoints only"
        return self.caller.portfolio_id


Handler = Callable[[Call], Awaitable[Any]]


@dataclass(frozen=True)
class Endpoint:
    """A compatible endpoint: methods, path below /fapi, handler and how it is charged."""

    methods: tuple[str, ...]
    path: str
    handler: Handler
    signed: bool
    weight: Weight
    orders: Weight = 0  # the orders it places, charged against the key's order limits


REGISTRY: list[Endpoint] = []


def endpoint(
    method: str, *paths: str, signed: bool = False, weight: Weight = 1, orders: Weight = 0
) -> Callable[[Handler], Handler]:
    """Register a handler for `method` at each of `paths` (e.g. "/v2/account", "/v3/account")."""

    def register(handler: Handler) -> Handler:
        for path in paths:
            REGISTRY.append(Endpoint((method,), path, handler, signed, weight, orders))
        return handler

    return register


async def _raw_body(request: Request) -> bytes:
    if request.method in ("GET", "HEAD"):
        return b""
    stored = request.scope.get("state", {}).get("raw_body")
    return stored if isinstance(stored, bytes) else await request.body()


def _count(weight: Weight, params: Params) -> int:
    return weight(params) if callable(weight) else weight


def route_handler(spec: Endpoint) -> Callable[[Request], Awaitable[Response]]:
    """The Starlette endpoint running `spec` with every compatible-surface rule applied."""

    async def run(request: Request) -> Response:
        ctx: AppContext = request.app.state.ctx
        meter = Meter()
        try:
            query: bytes = request.scope.get("query_string", b"")
            body = await _raw_body(request)
            params = Params.parse(query, body)
            weight = _count(spec.weight, params)
            caller = None
            if spec.signed:
                orders = _count(spec.orders, params)
                caller = await authenticate(
                    ctx, request, params, query, body, weight, meter, orders=orders
                )
            else:
                await charge(ctx, f"ip:{client_ip(request)}", weight, meter)
            result = await spec.handler(Call(request, ctx, params, caller, meter))
            response = result if isinstance(result, Response) else FapiJSONResponse(result)
        except Exception as exc:
            unavailable = as_unavailable(exc)
            if unavailable is not None:  # the database failed: 503, logged once per outage
                ctx.db.outages.failed(exc)
                response = error_response(unavailable)
            else:
                if not isinstance(exc, PapertradeError | TradingRuleError):
                    log.exception("unhandled error on %s %s", request.method, request.url.path)
                response = error_response(exc)
        if meter.weight is None:
            # Refused before any charge (malformed parameters): the IP still pays for it.
            usage = await ctx.limiter.hit(
                f"fapi-weight:ip:{client_ip(request)}",
                ctx.settings.rate_limit_compat_weight_per_min,
                60,
            )
            meter.weight = usage.used
        response.headers.update(meter.headers())
        return response

    return run
