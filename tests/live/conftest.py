"""Live accounts against "the exchange": a second Papertrade on 127.0.0.1, whose /fapi is
Binance-compatible, so the real ccxt client in live/ talks to it over HTTP. A fault proxy stands
in between and can answer errors or lose the answer of an order that went through."""

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request, Response

from papertrade.config import Settings
from tests.conftest import (
    PG_URL,
    User,
    _drop_postgres_database,
    _fresh_postgres_database,
    make_settings,
    running_app,
    sign_up,
)
from tests.liveserver import live_server


@dataclass
class Faults:
    errors_left: int = 0  # answer HTTP 503 to this many order requests (status unknown)
    rejections_left: int = 0  # answer "margin is insufficient" to this many order requests
    lose_order_answers: int = 0  # let this many orders through, then hang past the timeout
    drop_after_order: int = 0  # let this many orders through, then drop the connection
    drop_before_order: int = 0  # drop the connection of this many orders before forwarding
    hang_before_order: int = 0  # hold this many orders past the timeout, never forwarded
    drop_before_cancel: int = 0  # drop the connection of this many cancel-alls, not forwarded
    hang_position_reads: int = 0  # hold this many position reads past the timeout
    orders_seen: int = 0
    # Binance's GET /sapi/v1/account/apiRestrictions: None = the host has no such endpoint
    # (a testnet, another Papertrade), else the answer it gives for the key.
    restrictions: dict[str, object] | None = None
    restriction_queries: int = 0
    # Rewrites canTrade in the account answer (GET /fapi/v2|v3/account): False = a key that may
    # not trade futures. None leaves the exchange's own answer (Papertrade's is always true).
    can_trade: bool | None = None


class Dropped(Response):
    """Starts an answer and drops the connection halfway: the client sees it cut mid-order."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", b"400")],
            }
        )
        await send({"type": "http.response.body", "body": b'{"orderId', "more_body": True})
        raise ConnectionResetError("the fault proxy dropped the connection")


async def _held_back(faults: Faults, method: str, path: str) -> Response | None:
    """The fault's answer to a request that is not forwarded (or not yet), else None."""
    if method == "GET" and path == "fapi/v2/positionRisk" and faults.hang_position_reads > 0:
        faults.hang_position_reads -= 1
        await asyncio.sleep(3)  # past the client's timeout
        return Response('{"code":-1007,"msg":"Timeout"}', status_code=408)
    if method == "DELETE" and path == "fapi/v1/allOpenOrders" and faults.drop_before_cancel > 0:
        faults.drop_before_cancel -= 1
        return Dropped()
    if method != "POST" or path != "fapi/v1/order":
        return None
    faults.orders_seen += 1
    if faults.drop_before_order > 0:
        faults.drop_before_order -= 1
        return Dropped()
    if faults.hang_before_order > 0:
        faults.hang_before_order -= 1
        await asyncio.sleep(3)  # past the client's timeout; never forwarded
        return Response('{"code":-1007,"msg":"Timeout"}', status_code=408)
    if faults.errors_left > 0:
        faults.errors_left -= 1
        return Response('{"code":-1001,"msg":"Internal error"}', status_code=503)
    if faults.rejections_left > 0:
        faults.rejections_left -= 1
        return Response('{"code":-2019,"msg":"Margin is insufficient."}', status_code=400)
    return None


def fault_proxy(upstream: httpx.AsyncClient, faults: Faults) -> FastAPI:
    """The exchange behind `faults`; `upstream` is one client for every forwarded request (a
    client per request loaded the CA bundle each time, 35 ms of CPU)."""
    proxy = FastAPI()

    @proxy.get("/sapi/v1/account/apiRestrictions")
    async def restrictions(request: Request) -> Response:
        faults.restriction_queries += 1
        if faults.restrictions is None:
            return Response("Not Found", status_code=404)
        if "signature" not in request.query_params or not request.headers.get("X-MBX-APIKEY"):
            return Response('{"code":-1102,"msg":"Mandatory parameter missing."}', 400)
        return Response(json.dumps(faults.restrictions), media_type="application/json")

    @proxy.api_route("/{path:path}", methods=["GET", "POST", "DELETE", "PUT"])
    async def forward(path: str, request: Request) -> Response:
        is_order = request.method == "POST" and path == "fapi/v1/order"
        held = await _held_back(faults, request.method, path)
        if held is not None:
            return held
        answer = await upstream.request(
            request.method,
            "/" + path,
            params=list(request.query_params.multi_items()),
            content=await request.body(),
            headers={k: v for k, v in request.headers.items() if k.lower() != "host"},
        )
        if is_order and faults.drop_after_order > 0:
            faults.drop_after_order -= 1
            return Dropped()  # the order is in; the connection is cut before its answer
        if is_order and faults.lose_order_answers > 0:
            faults.lose_order_answers -= 1
            await asyncio.sleep(3)  # the order is in; its answer never arrives in time
        content = answer.content
        account = path in ("fapi/v2/account", "fapi/v3/account") and answer.status_code == 200
        if account and faults.can_trade is not None:
            content = json.dumps({**answer.json(), "canTrade": faults.can_trade}).encode()
        return Response(content, answer.status_code, media_type="application/json")

    return proxy


@dataclass
class Exchange:
    app: FastAPI
    url: str  # the fault proxy's
    user: User
    portfolio_id: int
    api_key: str
    api_secret: str
    faults: Faults


async def _settings(tmp: Path, name: str, **extra: object) -> tuple[Settings, str | None]:
    if not PG_URL:
        return make_settings(f"sqlite+aiosqlite:///{tmp / name}.db", tmp / name, **extra), None
    database = f"papertrade_live_{name}_{uuid.uuid4().hex[:8]}"
    url = await _fresh_postgres_database(database)
    return make_settings(url, tmp / name, **extra), database


@pytest.fixture
async def exchange(tmp_path: Path, uses_database: None) -> AsyncIterator[Exchange]:
    settings, database = await _settings(tmp_path, "exchange")
    try:
        async with (
            running_app(settings) as app,
            live_server(app) as upstream,
            httpx.AsyncClient(base_url=upstream, timeout=30) as forwarder,
        ):
            faults = Faults()
            async with live_server(fault_proxy(forwarder, faults)) as url:
                user = await sign_up(app)
                portfolio = await user.portfolio(name="sub-account")
                key, secret = await user.compat_key(portfolio["id"])
                yield Exchange(app, url, user, portfolio["id"], key, secret, faults)
                await user.client.aclose()
    finally:
        if database:
            await _drop_postgres_database(database)


@pytest.fixture
async def service(tmp_path: Path, exchange: Exchange) -> AsyncIterator[FastAPI]:
    settings, database = await _settings(
        tmp_path,
        "service",
        live_exchange_url=exchange.url,
        live_exchange_timeout_ms=1500,
        live_resend_stale_every_s=0,  # the tests run the sweep themselves, when they mean to
        # and reconciliation too: a scheduled pass that read positions before a test's trade by
        # hand and open orders after it told a second, half-changed drift (a CI failure)
        live_reconcile_every_s=0,
    )
    try:
        async with running_app(settings) as app:
            yield app
    finally:
        if database:
            await _drop_postgres_database(database)
