"""Live accounts against "the exchange": a second Papertrade on 127.0.0.1, whose /fapi is
Binance-compatible, so the real ccxt client in live/ talks to it over HTTP. A fault proxy stands
in between and can answer errors or lose the answer of an order that went through."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

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
    orders_seen: int = 0


def fault_proxy(upstream: str, faults: Faults) -> FastAPI:
    proxy = FastAPI()

    @proxy.api_route("/{path:path}", methods=["GET", "POST", "DELETE", "PUT"])
    async def forward(path: str, request: Request) -> Response:
        is_order = request.method == "POST" and path == "fapi/v1/order"
        if is_order:
            faults.orders_seen += 1
            if faults.errors_left > 0:
                faults.errors_left -= 1
                return Response('{"code":-1001,"msg":"Internal error"}', status_code=503)
            if faults.rejections_left > 0:
                faults.rejections_left -= 1
                return Response('{"code":-2019,"msg":"Margin is insufficient."}', status_code=400)
        async with httpx.AsyncClient(base_url=upstream, timeout=30) as client:
            answer = await client.request(
                request.method,
                "/" + path,
                params=list(request.query_params.multi_items()),
                content=await request.body(),
                headers={k: v for k, v in request.headers.items() if k.lower() != "host"},
            )
        if is_order and faults.lose_order_answers > 0:
            faults.lose_order_answers -= 1
            await asyncio.sleep(3)  # the order is in; its answer never arrives in time
        return Response(answer.content, answer.status_code, media_type="application/json")

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
async def exchange(tmp_path: Path) -> AsyncIterator[Exchange]:
    settings, database = await _settings(tmp_path, "exchange")
    try:
        async with running_app(settings) as app, live_server(app) as upstream:
            faults = Faults()
            async with live_server(fault_proxy(upstream, faults)) as url:
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
        tmp_path, "service", live_exchange_url=exchange.url, live_exchange_timeout_ms=1500
    )
    try:
        async with running_app(settings) as app:
            yield app
    finally:
        if database:
            await _drop_postgres_database(database)
