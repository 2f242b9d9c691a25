"""Subscriptions through /v1: free and paid tiers, payment wallet to wallet through the ledger,
cancel to the period's end, resubscribe, renewal and past_due, signals by tier and filter, and
the author's subscriber panel."""

import asyncio
from decimal import Decimal
from typing import Any

import httpx
import orjson
from fastapi import FastAPI
from sqlalchemy import select

from papertrade.models import OutboxEvent, Subscription
from papertrade.subscriptions.jobs import renew_due
from papertrade.subscriptions.service import PERIOD_MS
from tests.conftest import User
from tests.trading_api.helpers import market, set_price
from tests.wallet.credit import operator_credit


async def wallet_balance(user: User) -> Decimal:
    body = (await user.get("/v1/user/wallet")).json()
    assert body["balance"] == body["ledger_balance"]
    return Decimal(str(body["balance"]))


async def fund_wallet(user: User, amount: str) -> None:
    """Real money into the wallet, as an operator credits a USDT transfer (`papertrade recharge
    resolve --user`): portfolio money is paper and never moves into a wallet."""
    transport = user.client._transport
    assert isinstance(transport, httpx.ASGITransport)
    app = transport.app
    assert isinstance(app, FastAPI)
    await operator_credit(app, user.id, amount)


async def subscribe(user: User, portfolio_id: int, **body: Any) -> dict[str, Any]:
    response = await user.post("/v1/subscribe", json={"portfolio_id": portfolio_id, **body})
    assert response.status_code == 201, response.text
    return dict(response.json())


async def put_price(owner: User, portfolio_id: int, price: str) -> Any:
    return await owner.client.put(
        f"/v1/portfolios/{portfolio_id}/subscription-price",
        json={"price": price},
        headers=owner.write_headers(),
    )


async def priced_portfolio(owner: User, price: str) -> dict[str, Any]:
    portfolio = await owner.portfolio(name="signals", visibility="public")
    response = await put_price(owner, portfolio["id"], price)
    assert response.status_code == 200, response.text
    assert response.json()["price"] == float(price)
    return portfolio


async def expire(app: FastAPI, subscription_id: int) -> None:
    """The period is over (as if 30 days went by)."""
    async with app.state.ctx.transaction() as uow:
        sub = await uow.session.get(Subscription, subscription_id)
        assert sub is not None and sub.current_period_end is not None
        sub.current_period_end -= PERIOD_MS


async def test_paid_subscription_cancel_resubscribe_and_renewal(
    app: FastAPI, user_factory: Any
) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    portfolio = await priced_portfolio(owner, "25")
    await fund_wallet(fan, "60")
    owner_before = await wallet_balance(owner)

    sub = await subscribe(fan, portfolio["id"], tier="paid", channels=["inbox", "email"])
    assert (sub["tier"], sub["status"], sub["price"]) == ("paid", "active", 25)
    assert sub["current_period_end"] - sub["started_at"] == PERIOD_MS
    assert await wallet_balance(fan) == Decimal(35)
    assert await wallet_balance(owner) == owner_before + 25
    again = await fan.post("/v1/subscribe", json={"portfolio_id": portfolio["id"]})
    assert again.status_code == 409 and again.json()["error"] == "subscription_exists"

    cancelled = (await fan.post(f"/v1/subscriptions/{sub['id']}/cancel")).json()
    assert cancelled["status"] == "active" and cancelled["cancel_at_period_end"] is True
    resumed = await subscribe(fan, portfolio["id"], tier="paid")
    assert resumed["cancel_at_period_end"] is False
    assert await wallet_balance(fan) == Decimal(35)  # the period was paid already

    await expire(app, sub["id"])
    await renew_due(app.state.ctx)  # renewed: 25 more
    (mine,) = (await fan.get("/v1/subscriptions/my")).json()
    assert mine["status"] == "active"
    assert mine["current_period_end"] == sub["current_period_end"]  # old end − 30 d + 30 d
    assert await wallet_balance(fan) == Decimal(10)

    await expire(app, sub["id"])
    await renew_due(app.state.ctx)  # 10 left, 25 due: past_due, nothing moved
    (mine,) = (await fan.get("/v1/subscriptions/my")).json()
    assert mine["status"] == "past_due"
    assert await wallet_balance(fan) == Decimal(10)
    assert await wallet_balance(owner) == owner_before + 50

    await fund_wallet(fan, "20")
    await renew_due(app.state.ctx)  # paid again from now
    (mine,) = (await fan.get("/v1/subscriptions/my")).json()
    assert mine["status"] == "active" and await wallet_balance(fan) == Decimal(5)

    await fan.post(f"/v1/subscriptions/{sub['id']}/cancel")
    await expire(app, sub["id"])
    await renew_due(app.state.ctx)
    (mine,) = (await fan.get("/v1/subscriptions/my")).json()
    assert mine["status"] == "cancelled" and await wallet_balance(fan) == Decimal(5)

    panel = (await owner.get(f"/v1/portfolios/{portfolio['id']}/subscribers")).json()
    assert panel["revenue"] == 75 and panel["cancelled"] == 1 and panel["churn"] == 1.0
    assert panel["subscribers"][0]["paid_total"] == 75


async def test_free_tier_owner_panel_and_refusals(app: FastAPI, user_factory: Any) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    poor: User = await user_factory()
    portfolio = await owner.portfolio(name="free signals", visibility="public")
    paid = await fan.post("/v1/subscribe", json={"portfolio_id": portfolio["id"], "tier": "paid"})
    assert paid.status_code == 409 and paid.json()["error"] == "subscription_not_paid"
    await subscribe(fan, portfolio["id"])
    own_paid = await owner.post(
        "/v1/subscribe", json={"portfolio_id": portfolio["id"], "tier": "paid"}
    )
    assert own_paid.status_code == 409  # paying oneself is refused (issue 30)
    assert own_paid.json()["error"] == "subscription_own_portfolio"
    mine = await subscribe(owner, portfolio["id"])
    assert (mine["tier"], mine["price"]) == ("owner", 0)  # the owner follows free

    await put_price(owner, portfolio["id"], "5")
    broke = await poor.post("/v1/subscribe", json={"portfolio_id": portfolio["id"], "tier": "paid"})
    assert broke.status_code == 409 and broke.json()["error"] == "insufficient_funds"
    assert (await poor.get("/v1/subscriptions/my")).json() == []  # nothing half-made

    counts = (await poor.get(f"/v1/portfolios/{portfolio['id']}/subscriber-counts")).json()
    assert (counts["active"], counts["free"], counts["paid"], counts["price"]) == (2, 2, 0, 5)
    refused = await fan.get(f"/v1/portfolios/{portfolio['id']}/subscribers")
    assert refused.status_code == 404 and refused.json()["error"] == "portfolio_not_found"
    panel = (await owner.get(f"/v1/portfolios/{portfolio['id']}/subscribers")).json()
    assert {s["user_id"] for s in panel["subscribers"]} == {fan.id, owner.id}
    assert panel["revenue"] == 0 and panel["churn"] == 0

    private = await owner.portfolio(name="private")
    hidden = await fan.post("/v1/subscribe", json={"portfolio_id": private["id"]})
    assert hidden.status_code == 404 and hidden.json()["error"] == "portfolio_not_found"


async def test_subscriber_counts_are_public_for_public_portfolios(
    user_factory: Any, anon: Any
) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    payer: User = await user_factory()
    portfolio = await owner.portfolio(name="open book", visibility="public")
    await put_price(owner, portfolio["id"], "5")
    await fund_wallet(payer, "5")
    await subscribe(fan, portfolio["id"])
    await subscribe(payer, portfolio["id"], tier="paid")

    shown = await anon.get(f"/v1/portfolios/{portfolio['id']}/subscriber-counts")  # no sign-in
    assert shown.status_code == 200, shown.text
    counts = shown.json()
    assert (counts["active"], counts["paid"], counts["free"], counts["price"]) == (2, 1, 1, 5)

    private = await owner.portfolio(name="diary")
    for reader in (anon, fan):  # a private portfolio's counts: not found, signed in or not
        hidden = await reader.get(f"/v1/portfolios/{private['id']}/subscriber-counts")
        assert hidden.status_code == 404 and hidden.json()["error"] == "portfolio_not_found"
    mine = await owner.get(f"/v1/portfolios/{private['id']}/subscriber-counts")
    assert mine.status_code == 200 and mine.json()["active"] == 0  # its owner still sees them


async def signals_for(app: FastAPI, user_id: int, count: int) -> list[dict[str, Any]]:
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        async with app.state.ctx.db.reader() as session:
            rows = await session.scalars(
                select(OutboxEvent.data)
                .where(OutboxEvent.type == "subscription.signal")
                .order_by(OutboxEvent.id)
            )
            found = [d for d in map(orjson.loads, rows.all()) if d["user_id"] == user_id]
        if len(found) >= count or asyncio.get_running_loop().time() > deadline:
            return found
        await asyncio.sleep(0.05)


async def test_signals_follow_tier_and_filters(app: FastAPI, user_factory: Any) -> None:
    owner: User = await user_factory()
    free_fan: User = await user_factory()
    paid_fan: User = await user_factory()
    portfolio = await priced_portfolio(owner, "1")
    await fund_wallet(paid_fan, "1")
    await subscribe(free_fan, portfolio["id"], channels=["inbox", "email"])
    paid = await subscribe(paid_fan, portfolio["id"], tier="paid", channels=["email"])
    changed = await paid_fan.patch(
        f"/v1/subscriptions/{paid['id']}", json={"channels": ["telegram", "inbox"]}
    )
    assert changed.status_code == 200 and changed.json()["channels"] == ["inbox", "telegram"]
    await set_price(app, "ETHUSDT", "3000")
    await market(owner, portfolio["id"], "ETHUSDT", "buy", "0.1")
    await market(owner, portfolio["id"], "ETHUSDT", "sell", "0.1")

    paid_signals = await signals_for(app, paid_fan.id, 2)
    assert [s["side"] for s in paid_signals] == ["long", "close"]
    assert paid_signals[0]["channels"] == ["inbox", "telegram"]
    assert paid_signals[0]["symbol"] == "ETHUSDT" and Decimal(paid_signals[0]["price"]) == 3000
    # The free tier sees closed trades only, in the inbox only.
    free_signals = await signals_for(app, free_fan.id, 1)
    assert [(s["side"], s["channels"]) for s in free_signals] == [("close", ["inbox"])]


async def test_thirty_subscribes_at_once_answer_201_or_409_and_pay_once(
    app: FastAPI, user_factory: Any
) -> None:
    """Issue 30: 30 concurrent POST /v1/subscribe to one paid portfolio answered 1 × 201,
    1 × 409 and 28 × 500 (the unique index's violation). One is made and paid; every other
    one is told subscription_exists."""
    owner: User = await user_factory()
    fan: User = await user_factory()
    portfolio = await priced_portfolio(owner, "3")
    await fund_wallet(fan, "100")
    body = {"portfolio_id": portfolio["id"], "tier": "paid"}
    answers = await asyncio.gather(*(fan.post("/v1/subscribe", json=body) for _ in range(30)))
    codes = sorted(a.status_code for a in answers)
    assert set(codes) <= {201, 409} and codes.count(201) == 1, [a.text for a in answers]
    assert {a.json()["error"] for a in answers if a.status_code == 409} == {"subscription_exists"}
    assert await wallet_balance(fan) == 97 and await wallet_balance(owner) == 3
    (mine,) = (await fan.get("/v1/subscriptions/my")).json()
    assert (mine["tier"], mine["status"]) == ("paid", "active")
