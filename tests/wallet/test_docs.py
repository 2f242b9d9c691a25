"""The worked examples of docs/wallet.md and docs/tiers.md, and `papertrade recharge`."""

import time
from decimal import Decimal
from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import select, update

from papertrade import cli
from papertrade.config import Settings
from papertrade.models import Membership, TronTransfer
from papertrade.recharge import operator
from papertrade.tiers.table import PERIOD_MS
from tests.conftest import User, sign_up
from tests.fakes.trongrid import FakeTronGrid
from tests.wallet.conftest import balance, fund, watch

DOCS = Path(__file__).parents[2] / "docs"
DAY_MS = 86_400_000


async def test_wallet_md_transfer_example(member: User, wapp: FastAPI, fake: FakeTronGrid) -> None:
    text = (DOCS / "wallet.md").read_text()
    assert '→ {"wallet_balance": 60, "portfolio_balance": 10040}' in text
    paid = Decimal(str((await fund(wapp, fake, member, "100"))["pay_amount"]))
    portfolio = await member.portfolio()  # 10,000 USDT
    sent = paid - 60  # 40 when the pay amount was exactly 100
    response = await member.post(
        "/v1/user/wallet/transfers",
        json={"direction": "to_portfolio", "portfolio_id": portfolio["id"], "amount": str(sent)},
    )
    assert response.json() == {"wallet_balance": 60, "portfolio_balance": float(10000 + sent)}


async def test_wallet_md_pay_amount_example(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    text = (DOCS / "wallet.md").read_text()
    assert "250 → 250.00    250 → 250.01    250 → 250.02    250.01 → 250.03" in text
    assert '"value": "250010000"' in text and "recharge +250.01" in text
    pays = []
    other = await sign_up(wapp)  # one user holds at most 3 pending orders: the 4th is another's
    for who, amount in ((member, "250"), (member, "250"), (member, "250"), (other, "250.01")):
        response = await who.post("/v1/recharge/orders", json={"amount": amount})
        pays.append(response.json()["pay_amount"])
    assert pays == [250, 250.01, 250.02, 250.03]
    fake.add("250.01")
    await watch(wapp)
    assert await balance(member) == Decimal("250.01")
    for who in (member, other):
        for order in (await who.get("/v1/recharge/orders")).json():
            await who.post(f"/v1/recharge/orders/{order['id']}/cancel")  # free the amounts
    await other.client.aclose()


async def test_tiers_md_switch_example(member: User, wapp: FastAPI, fake: FakeTronGrid) -> None:
    """Pro bought on day 0 (15), elite on day 10: 20 unused days refunded (10), 49 paid."""
    text = (DOCS / "tiers.md").read_text()
    assert "100 − 15 = 85" in text and "85 + 10.000000 − 49 = 46" in text
    paid = Decimal(str((await fund(wapp, fake, member, "100"))["pay_amount"]))
    await member.post("/v1/launch/tiers/me", json={"tier": "pro"})
    assert await balance(member) == paid - 15
    now = int(time.time() * 1000)
    async with wapp.state.ctx.transaction() as uow:  # ten days later
        await uow.session.execute(
            update(Membership)
            .where(Membership.user_id == member.id)
            .values(period_start=now - 10 * DAY_MS, paid_until=now + 20 * DAY_MS)
        )
    switched = (await member.post("/v1/launch/tiers/me", json={"tier": "elite"})).json()
    assert switched["tier"] == "elite"
    assert switched["paid_until"] - int(time.time() * 1000) <= PERIOD_MS
    rows = (await member.get("/v1/user/wallet/ledger")).json()
    assert (rows[0]["kind"], rows[0]["amount"]) == ("tier_payment", -49)
    assert rows[1]["kind"] == "tier_refund"
    assert abs(Decimal(str(rows[1]["amount"])) - 10) < Decimal("0.0001")  # seconds passed
    assert abs(await balance(member) - (paid - 15 + 10 - 49)) < Decimal("0.0001")


async def test_papertrade_recharge_lists_and_resolves(
    member: User, wapp: FastAPI, fake: FakeTronGrid, wallet_settings: Settings
) -> None:
    await member.post(
        "/v1/recharge/orders", json={"amount": "7"}
    )  # the watcher looks while one is open
    tx = fake.add("3.333333")  # an amount no order asked for
    await watch(wapp)
    listed = await operator.unmatched(wallet_settings)
    assert tx in listed and "3.333333" in listed
    async with wapp.state.ctx.db.reader() as session:
        transfer_id = await session.scalar(select(TronTransfer.id).where(TronTransfer.tx_id == tx))
    assert transfer_id is not None
    done = await operator.resolve(
        wallet_settings, transfer_id, by="bob", order_id=None, user=member.email.upper(), note="ok"
    )
    assert done == f"transfer {transfer_id}: 3.333333 USDT credited, resolved by bob"
    assert await balance(member) == Decimal("3.333333")
    again = await operator.resolve(
        wallet_settings, transfer_id, by="bob", order_id=None, user=str(member.id), note=""
    )
    assert again.startswith("refused: Only an unmatched transfer")
    assert await balance(member) == Decimal("3.333333")
    assert tx not in await operator.unmatched(wallet_settings)


def test_resolve_needs_an_order_or_a_user(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(["recharge", "resolve", "0", "--by", "x", "--user", "1"])
    assert stopped.value.code == 2
    assert "give an id" in capsys.readouterr().err
