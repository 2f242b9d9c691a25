"""An app with the tier limits on and recharge pointed at a fake TronGrid on 127.0.0.1, on a
database of its own; helpers to fund a wallet the real way (order, transfer, watcher)."""

import uuid
from collections.abc import AsyncIterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.recharge.watcher import WatchResult, watch_once
from tests.conftest import (
    PG_URL,
    User,
    _drop_postgres_database,
    _fresh_postgres_database,
    make_settings,
    running_app,
    sign_up,
)
from tests.fakes.trongrid import ADDRESS, FakeTronGrid
from tests.liveserver import live_server


@pytest.fixture(scope="package")
async def tron() -> AsyncIterator[tuple[FakeTronGrid, str]]:
    fake = FakeTronGrid()
    async with live_server(fake.app()) as url:
        yield fake, url


@pytest.fixture(scope="package")
async def wallet_settings(
    uses_database: None, tron: tuple[FakeTronGrid, str], tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Settings]:
    var = tmp_path_factory.mktemp("wallet")
    name = f"papertrade_wallet_{uuid.uuid4().hex[:8]}"
    url = await _fresh_postgres_database(name) if PG_URL else f"sqlite+aiosqlite:///{var / 'w.db'}"
    yield wallet_settings_for(url, var, tron[1])
    if PG_URL:
        await _drop_postgres_database(name)


def wallet_settings_for(url: str, var: Path, tron_url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "tiers_enforced": True,
        "recharge_addresses": [ADDRESS],
        "trongrid_url": tron_url,
        "trongrid_api_key": "test-tron-key",
        "recharge_confirmations": 0,
        "recharge_poll_s": 0,  # the tests run the watcher themselves, unless they say
    }
    return make_settings(url, var, **(values | overrides))


@pytest.fixture(scope="package")
async def wapp(wallet_settings: Settings) -> AsyncIterator[FastAPI]:
    async with running_app(wallet_settings) as app:
        yield app


@pytest.fixture
async def member(wapp: FastAPI) -> AsyncIterator[User]:
    user = await sign_up(wapp)
    yield user
    await user.client.aclose()


@pytest.fixture
def fake(tron: tuple[FakeTronGrid, str]) -> FakeTronGrid:
    return tron[0]


async def watch(app: FastAPI) -> WatchResult:
    return await watch_once(app.state.ctx)


async def fund(app: FastAPI, fake: FakeTronGrid, user: User, amount: str) -> dict[str, Any]:
    """Recharge `user`'s wallet the way a user does: an order, an exact transfer, the watcher."""
    response = await user.post("/v1/recharge/orders", json={"amount": amount})
    assert response.status_code == 201, response.text
    order = response.json()
    fake.add(Decimal(str(order["pay_amount"])))
    await watch(app)
    paid = await user.get(f"/v1/recharge/orders/{order['id']}")
    assert paid.json()["status"] == "paid", paid.text
    return dict(paid.json())


async def balance(user: User) -> Decimal:
    response = await user.get("/v1/user/wallet")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["balance"] == body["ledger_balance"]  # the ledger always adds up
    return Decimal(str(body["balance"]))
