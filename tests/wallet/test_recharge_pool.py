"""B6's optional pool of receiving addresses: every address is shared by all users and each
pending order holds a unique pay amount on its address; when the 100 amounts of one base amount
are taken on the first address the next one takes the order, and the watcher credits a transfer
to the address it was sent to (docs/wallet.md)."""

from collections.abc import AsyncIterator
from decimal import Decimal

import pytest
from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.errors import Conflict
from papertrade.recharge import service as recharges
from papertrade.recharge.watcher import watch_once
from tests.conftest import running_app, sign_up
from tests.fakes.trongrid import ADDRESS, FakeTronGrid
from tests.wallet.conftest import balance, wallet_settings_for

SECOND = "TJRabPrwbZy45sbavfcjinPJC18kjpRTv8"


@pytest.fixture
async def pool_app(
    tron: tuple[FakeTronGrid, str], isolated_settings: Settings
) -> AsyncIterator[FastAPI]:
    settings = wallet_settings_for(
        isolated_settings.database_url,
        isolated_settings.var_dir,
        tron[1],
        recharge_addresses=[ADDRESS, SECOND],
    )
    async with running_app(settings) as app:
        yield app


async def test_the_next_address_takes_an_amount_when_the_first_is_full(
    pool_app: FastAPI, fake: FakeTronGrid
) -> None:
    user = await sign_up(pool_app)
    ctx = pool_app.state.ctx
    made = []
    for _ in range(100):
        async with ctx.transaction() as uow:
            order = await recharges.create(
                uow, user.id, Decimal(7), addresses=[ADDRESS, SECOND], expiry_ms=600_000
            )
            made.append((order.address, order.pay_amount))
    assert made == [(ADDRESS, Decimal(7) + Decimal("0.01") * k) for k in range(100)]
    with pytest.raises(Conflict) as full:  # with one address the 101st waits
        async with ctx.transaction() as uow:
            await recharges.create(uow, user.id, Decimal(7), addresses=[ADDRESS], expiry_ms=600_000)
    assert full.value.code == "try_again_later"

    # (Through the API one user holds at most 3 pending orders: another user asks.)
    other = await sign_up(pool_app)
    spilled = await other.post("/v1/recharge/orders", json={"amount": "7"})
    assert spilled.status_code == 201, spilled.text
    assert (spilled.json()["address"], spilled.json()["pay_amount"]) == (SECOND, 7)

    fake.add(Decimal(7), to=SECOND)  # 7.00 to the second address pays the spilled order only
    await watch_once(ctx)
    paid = await other.get(f"/v1/recharge/orders/{spilled.json()['id']}")
    assert paid.json()["status"] == "paid", paid.text
    listed = (await user.get("/v1/recharge/orders?limit=200")).json()
    first_seven = [o for o in listed if o["address"] == ADDRESS and o["pay_amount"] == 7]
    assert [o["status"] for o in first_seven] == ["pending"]
    assert await balance(user) == 0 and await balance(other) == Decimal(7)
    await user.client.aclose()
    await other.client.aclose()
