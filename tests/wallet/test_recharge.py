"""USDT-TRC20 recharge orders and the watcher against a fake TronGrid on 127.0.0.1 (B6)."""

import asyncio
import time
from decimal import Decimal
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update

from papertrade.config import Settings
from papertrade.models import JobRecord, RechargeOrder, TronTransfer
from papertrade.recharge import service
from papertrade.recharge.trongrid import USDT_CONTRACT, Transfer
from papertrade.recharge.watcher import _store
from tests.conftest import User, running_app, sign_up
from tests.fakes.trongrid import ADDRESS, FakeTronGrid
from tests.wallet.conftest import balance, fund, wallet_settings_for, watch


async def _order(user: User, amount: Any) -> dict[str, Any]:
    response = await user.post("/v1/recharge/orders", json={"amount": amount})
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_an_order_shows_the_address_a_unique_amount_and_thirty_minutes(
    member: User,
) -> None:
    first = await _order(member, 1234)
    second = await _order(member, "1234")
    assert first["address"] == ADDRESS and first["status"] == "pending"
    assert first["pay_amount"] == 1234 and second["pay_amount"] == 1234.01
    assert first["expires_at"] - first["created_at"] == 30 * 60 * 1000
    # a third on another base amount that would collide with 1234.01 skips it
    third = await _order(member, "1234.01")
    assert third["pay_amount"] == 1234.02


async def test_bad_amounts_are_refused(member: User) -> None:
    for amount in [0.99, 0, -5, "abc", "1.001", True, None]:
        response = await member.post("/v1/recharge/orders", json={"amount": amount})
        assert response.status_code == 422, amount
        assert response.json()["error"] == "validation_error"


async def test_recharge_is_unavailable_without_an_address(user: User) -> None:
    response = await user.post("/v1/recharge/orders", json={"amount": 10})
    assert response.status_code == 409
    assert response.json()["error"] == "recharge_unavailable"


async def test_list_get_cancel_and_anothers_order_is_404(member: User, wapp: FastAPI) -> None:
    order = await _order(member, 77)
    listed = (await member.get("/v1/recharge/orders")).json()
    assert listed[0]["id"] == order["id"]
    other = await sign_up(wapp)
    try:
        for response in (
            await other.get(f"/v1/recharge/orders/{order['id']}"),
            await other.post(f"/v1/recharge/orders/{order['id']}/cancel"),
            await other.get(f"/v1/recharge/orders/{order['id']}/qr.svg"),
        ):
            assert response.status_code == 404
            assert response.json()["error"] == "recharge_not_found"
        assert (await other.get("/v1/recharge/orders")).json() == []
    finally:
        await other.client.aclose()
    qr = await member.get(f"/v1/recharge/orders/{order['id']}/qr.svg")
    assert qr.headers["content-type"].startswith("image/svg+xml")
    assert qr.text.startswith("<svg") and 'class="qrline"' in qr.text
    cancelled = await member.post(f"/v1/recharge/orders/{order['id']}/cancel")
    assert cancelled.json()["status"] == "cancelled"
    again = await member.post(f"/v1/recharge/orders/{order['id']}/cancel")
    assert again.status_code == 409 and again.json()["error"] == "recharge_not_pending"
    # its amount is free again
    assert (await _order(member, 77))["pay_amount"] == 77


async def test_an_exact_transfer_credits_the_wallet_once(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    order = await fund(wapp, fake, member, "25")
    assert order["tx_id"] and order["paid_at"]
    assert await balance(member) == Decimal("25")
    await watch(wapp)  # the same transfer again: nothing more
    await watch(wapp)
    assert await balance(member) == Decimal("25")
    ledger = (await member.get("/v1/user/wallet/ledger")).json()
    assert [(row["kind"], row["amount"]) for row in ledger] == [("recharge", 25)]
    assert ledger[0]["reference"] == f"tron:{order['tx_id']}" and ledger[0]["actor"] == "watcher"


async def test_the_watcher_sends_b6s_query_and_the_api_key(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    order = await _order(member, 3)
    fake.requests.clear()
    await watch(wapp)
    query = fake.requests[0].query_params
    assert fake.requests[0].url.path == f"/v1/accounts/{ADDRESS}/transactions/trc20"
    assert query["only_to"] == "true" and query["only_confirmed"] == "true"
    assert query["contract_address"] == USDT_CONTRACT and query["limit"] == "200"
    assert query["order_by"] == "block_timestamp,asc"
    assert int(query["min_timestamp"]) <= order["created_at"] - 60_000
    assert fake.requests[0].headers["TRON-PRO-API-KEY"] == "test-tron-key"


async def test_pages_are_followed_by_fingerprint(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    order = await _order(member, 5)
    for _ in range(3):
        fake.add("0.5")  # noise: amounts nobody asked for
    fake.add(Decimal(str(order["pay_amount"])))
    fake.page_size = 1
    fake.requests.clear()
    try:
        await watch(wapp)
    finally:
        fake.page_size = None
    assert len(fake.requests) >= 4
    assert "fingerprint" in fake.requests[1].query_params
    assert (await member.get(f"/v1/recharge/orders/{order['id']}")).json()["status"] == "paid"


async def test_wrong_amount_outside_the_window_and_other_tokens_are_not_credited(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    order = await _order(member, 9)
    pay = Decimal(str(order["pay_amount"]))
    wrong = fake.add(pay + Decimal("0.000001"))
    early = fake.add(pay, at_ms=order["created_at"] - 1)  # before the order existed
    fake.add(pay, token="TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj")  # another token
    fake.add(pay, kind="Approval")
    await watch(wapp)
    assert (await member.get(f"/v1/recharge/orders/{order['id']}")).json()["status"] == "pending"
    assert await balance(member) == 0
    async with wapp.state.ctx.db.reader() as session:
        kept = {
            row.tx_id: row.status
            for row in await session.scalars(
                select(TronTransfer).where(TronTransfer.tx_id.in_([wrong, early]))
            )
        }
    assert kept == {wrong: "unmatched", early: "unmatched"}


async def test_a_crash_between_seen_and_credited_loses_nothing(member: User, wapp: FastAPI) -> None:
    """The first step stored the transfer and the process died before judging it: the next run
    credits it, once."""
    order = await _order(member, 11)
    now = int(time.time() * 1000)
    value = int(Decimal(str(order["pay_amount"])) * 1_000_000)
    ctx = wapp.state.ctx
    seen = Transfer("crash" + str(now), "TSender", ADDRESS, value, now)
    assert await _store(ctx, seen) == 1
    assert await _store(ctx, seen) == 0  # kept once
    await watch(wapp)
    await watch(wapp)
    assert await balance(member) == Decimal("11")


async def test_a_transfer_waits_for_its_confirmations(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    order = await _order(member, 13)
    fake.add(Decimal(str(order["pay_amount"])))
    ctx = wapp.state.ctx
    ctx.settings.recharge_confirmations = 10_000  # ~8 hours of blocks
    try:
        await watch(wapp)
        assert await balance(member) == 0
    finally:
        ctx.settings.recharge_confirmations = 0
    await watch(wapp)
    assert await balance(member) == Decimal("13")


async def test_an_operator_resolves_an_unmatched_transfer(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    order = await _order(member, 17)
    tx = fake.add(Decimal(str(order["pay_amount"])) + 1)  # sent 1 USDT too much
    await watch(wapp)
    ctx = wapp.state.ctx
    async with ctx.db.reader() as session:
        transfer = await session.scalar(select(TronTransfer).where(TronTransfer.tx_id == tx))
    assert transfer is not None and transfer.status == "unmatched"
    async with ctx.transaction() as uow:
        await service.resolve(uow, transfer.id, operator="alice", order_id=order["id"])
    got = (await member.get(f"/v1/recharge/orders/{order['id']}")).json()
    assert got["status"] == "paid_late" and got["tx_id"] == tx
    assert await balance(member) == Decimal("18")
    entry = (await member.get("/v1/user/wallet/ledger")).json()[0]
    assert entry["kind"] == "operator_credit" and entry["actor"] == "operator:alice"


async def test_a_failing_trongrid_credits_nothing_and_is_retried(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    order = await _order(member, 19)
    fake.add(Decimal(str(order["pay_amount"])))
    fake.fail_with = 503
    try:  # the job records the failure; the next run tries again
        with pytest.raises(httpx.HTTPStatusError, match="503"):
            await watch(wapp)
    finally:
        fake.fail_with = None
    await watch(wapp)
    assert await balance(member) == Decimal("19")


async def test_the_scheduled_watcher_credits_without_anyone_calling_it(
    isolated_settings: Settings, tron: tuple[FakeTronGrid, str]
) -> None:
    """The real job engine runs recharge.watch every RECHARGE_POLL_S seconds (here 1)."""
    settings = wallet_settings_for(
        isolated_settings.database_url, isolated_settings.var_dir, tron[1], recharge_poll_s=1
    )
    async with running_app(settings) as app:
        user = await sign_up(app)
        order = await _order(user, 31)
        tron[0].add(Decimal(str(order["pay_amount"])))
        for _ in range(300):  # up to a minute on a loaded machine
            status = (await user.get(f"/v1/recharge/orders/{order['id']}")).json()["status"]
            if status == "paid":
                break
            await asyncio.sleep(0.2)
        assert status == "paid"
        assert await balance(user) == Decimal(str(order["pay_amount"]))
        # The run is recorded as succeeded once it has returned, a moment after its credit.
        for _ in range(300):
            async with app.state.ctx.db.reader() as session:
                runs = list(
                    await session.scalars(
                        select(JobRecord).where(JobRecord.name == "recharge.watch")
                    )
                )
            if any(run.status == "succeeded" for run in runs):
                break
            await asyncio.sleep(0.2)
        assert any(run.status == "succeeded" for run in runs)
        await user.client.aclose()


HALF_HOUR_AND_A_MINUTE_MS = 31 * 60 * 1000


async def _age(app: FastAPI, order_id: int, by_ms: int) -> dict[str, int]:
    """Move an order's clock: it was created `by_ms` earlier (and so expires that much earlier)."""
    async with app.state.ctx.transaction() as uow:
        await uow.session.execute(
            update(RechargeOrder)
            .where(RechargeOrder.id == order_id)
            .values(
                created_at=RechargeOrder.created_at - by_ms,
                expires_at=RechargeOrder.expires_at - by_ms,
            )
        )
        order = await uow.session.get(RechargeOrder, order_id)
        assert order is not None
        return {"created_at": order.created_at, "expires_at": order.expires_at}


async def _stored_status(app: FastAPI, order_id: int) -> str:
    async with app.state.ctx.db.reader() as session:
        order = await session.get(RechargeOrder, order_id)
    assert order is not None
    return str(order.status)


async def test_an_unpaid_order_expires_after_thirty_minutes_and_frees_its_amount(
    member: User, wapp: FastAPI
) -> None:
    order = await _order(member, 19)
    await _age(wapp, order["id"], HALF_HOUR_AND_A_MINUTE_MS)
    # the user sees it expired at once; the row catches up when the watcher runs
    got = (await member.get(f"/v1/recharge/orders/{order['id']}")).json()
    assert got["status"] == "expired"
    await watch(wapp)
    assert await _stored_status(wapp, order["id"]) == "expired"
    cancel = await member.post(f"/v1/recharge/orders/{order['id']}/cancel")
    assert cancel.status_code == 409 and cancel.json()["error"] == "recharge_not_pending"
    assert (await _order(member, 19))["pay_amount"] == 19  # its amount is free again


async def test_a_transfer_sent_in_time_but_seen_after_expiry_still_pays(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    """B6 matches by block time: a transfer in the window credits the order even when the
    watcher first sees it after the order expired (e.g. sent in its last seconds)."""
    order = await _order(member, 23)
    window = await _age(wapp, order["id"], HALF_HOUR_AND_A_MINUTE_MS)
    await watch(wapp)
    assert await _stored_status(wapp, order["id"]) == "expired"
    fake.add(Decimal(str(order["pay_amount"])), at_ms=window["expires_at"] - 1000)
    await watch(wapp)
    got = (await member.get(f"/v1/recharge/orders/{order['id']}")).json()
    assert got["status"] == "paid" and got["tx_id"]
    assert await balance(member) == Decimal("23")


async def test_a_transfer_sent_after_expiry_is_kept_for_an_operator(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    order = await _order(member, 29)
    window = await _age(wapp, order["id"], HALF_HOUR_AND_A_MINUTE_MS)
    late = fake.add(Decimal(str(order["pay_amount"])), at_ms=window["expires_at"] + 1000)
    await watch(wapp)
    assert (await member.get(f"/v1/recharge/orders/{order['id']}")).json()["status"] == "expired"
    assert await balance(member) == 0
    async with wapp.state.ctx.db.reader() as session:
        transfer = await session.scalar(select(TronTransfer).where(TronTransfer.tx_id == late))
    assert transfer is not None and transfer.status == "unmatched"
    # only an operator turns it into paid_late
    async with wapp.state.ctx.transaction() as uow:
        await service.resolve(uow, transfer.id, operator="bob", order_id=order["id"])
    got = (await member.get(f"/v1/recharge/orders/{order['id']}")).json()
    assert got["status"] == "paid_late"
    assert await balance(member) == Decimal("29")
