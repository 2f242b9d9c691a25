"""Deleting an account ends what it shares with others, through each area's own rules
(docs/profile.md): copying (both sides), subscriptions (both sides), comments, strategies."""

from decimal import Decimal
from typing import Any

from fastapi import FastAPI
from sqlalchemy import select

from papertrade.models import StrategyDeployment
from tests.conftest import User
from tests.copytrading.helpers import portfolio_balance
from tests.copytrading.test_revenue_share import copied_round_trip, wallet_balance
from tests.notifications.helpers import wait_for_inbox
from tests.strategies.test_live import ALWAYS_LONG, deploy
from tests.subscriptions.test_subscriptions import (
    fund_wallet,
    priced_portfolio,
    put_price,
    subscribe,
)


async def delete_account(user: User) -> None:
    deleted = await user.post("/v1/user/delete", json={"password": user.password})
    assert deleted.status_code == 200 and deleted.json() == {"ok": True}, deleted.text


async def test_a_deleted_follower_unfollows_and_pays_the_leader_its_share(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, _, relation = await copied_round_trip(app, leader, follower)  # 18.99 USDT net
    leader_before = await portfolio_balance(leader, led["id"])
    await delete_account(follower)
    # the normal unfollow: 10 % of 18.99 reaches the leader's portfolio (paper: not the wallet)
    assert await portfolio_balance(leader, led["id"]) == leader_before + Decimal("1.899")
    assert await wallet_balance(leader) == 0
    # the unfollow settles last; the weekly job may have settled the same share just before
    # (no position open: it is due), and then the unfollow owes nothing more
    settled = [
        s
        for s in (await leader.get("/v1/copy/settlements")).json()
        if s["relation_id"] == relation["id"]
    ]
    assert settled[0]["reason"] == "unfollow"
    assert sum(s["fee"] for s in settled) == 1.899
    ended = await wait_for_inbox(leader, 2, kind="copy")  # ended and settled
    assert any(n["title"] == "Copy trading ended" for n in ended)


async def test_a_deleted_leaders_followers_are_released_and_told_without_a_fee(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine, relation = await copied_round_trip(app, leader, follower)
    before = await portfolio_balance(follower, mine["id"])
    await delete_account(leader)
    seen = (await follower.get(f"/v1/copy/relations/{relation['id']}")).json()
    assert (seen["status"], seen["end_reason"], seen["fees_paid"]) == ("ended", "deleted", 0)
    assert await portfolio_balance(follower, mine["id"]) == before  # nobody to pay a share to
    (settled,) = (await follower.get("/v1/copy/settlements")).json()[:1]
    assert (settled["reason"], settled["pct"], settled["fee"]) == ("deleted", 0, 0)
    told = await wait_for_inbox(follower, 2, kind="copy")
    # the copy is named by the portfolio it copied (issue 33: codes, not ids)
    assert f"The copy of {led['code']} ended (deleted)." in [n["body"] for n in told]
    again = await follower.post(f"/v1/copy/relations/{relation['id']}/unfollow", json={})
    assert again.status_code == 409 and again.json()["error"] == "copy_ended"


async def test_subscriptions_end_on_both_sides(app: FastAPI, user_factory: Any) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    other: User = await user_factory()
    paid_portfolio = await priced_portfolio(owner, "25")
    await fund_wallet(fan, "60")
    paid = await subscribe(fan, paid_portfolio["id"], tier="paid")
    assert paid["status"] == "active"
    # the owner subscribes to someone else's portfolio too
    others = await other.portfolio(name="elsewhere", visibility="public")
    assert (await subscribe(owner, others["id"]))["status"] == "active"

    await delete_account(owner)
    (mine,) = (await fan.get("/v1/subscriptions/my")).json()
    assert mine["status"] == "cancelled" and mine["cancel_at_period_end"] is False
    assert await wallet_balance(fan) == Decimal(35)  # the paid period is not refunded
    told = await wait_for_inbox(fan, 2, kind="subscription")  # newest first, after "subscribed"
    assert told[0]["title"] == "Subscription portfolio deleted"
    assert told[0]["body"] == f"Your subscription #{paid['id']} is cancelled (portfolio_deleted)."
    panel = (await other.get(f"/v1/portfolios/{others['id']}/subscribers")).json()
    (row,) = panel["subscribers"]
    assert (row["user_id"], row["status"]) == (owner.id, "cancelled") and panel["cancelled"] == 1


async def test_comments_become_placeholders_and_strategies_stop(
    app: FastAPI, user_factory: Any
) -> None:
    owner: User = await user_factory()
    leaving: User = await user_factory()
    pid = (await owner.portfolio(name="talked about", visibility="public"))["id"]
    said = await leaving.post("/v1/comments", json={"portfolio_id": pid, "text": "my words"})
    assert said.status_code == 201
    reply = await owner.post(
        "/v1/comments", json={"portfolio_id": pid, "text": "thanks", "parent_id": said.json()["id"]}
    )
    assert reply.status_code == 201
    own = await leaving.portfolio(name="bot")
    sid, deployment_id = await deploy(leaving, ALWAYS_LONG, own["id"])
    code = (await leaving.get(f"/v1/strategies/{sid}")).json()["code"]
    assert (await owner.get(f"/v1/strategies/by_code/{code}")).status_code == 200  # public

    await delete_account(leaving)
    (thread,) = (await owner.get("/v1/comments", params={"portfolio_id": pid})).json()
    assert (thread["deleted"], thread["text"]) == (True, "")
    assert [r["text"] for r in thread["replies"]] == ["thanks"]  # others' replies stay
    assert (await owner.get(f"/v1/strategies/by_code/{code}")).status_code == 404
    async with app.state.ctx.db.reader() as session:
        status = await session.scalar(
            select(StrategyDeployment.status).where(StrategyDeployment.id == deployment_id)
        )
    assert status == "stopped"


async def test_deleting_a_portfolio_ends_its_copies_and_its_subscriptions(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    fan: User = await user_factory()
    led, _mine, relation = await copied_round_trip(app, leader, follower)  # 18.99 USDT net
    assert (await put_price(leader, led["id"], "25")).status_code == 200
    await fund_wallet(fan, "60")
    paid = await subscribe(fan, led["id"], tier="paid")
    leader_before = await wallet_balance(leader)

    deleted = await leader.client.delete(
        f"/v1/portfolios/{led['id']}", headers=leader.write_headers()
    )
    assert deleted.status_code == 200, deleted.text
    # the copy ends and settles at the leader's share: the leader is still there to receive it,
    # in the portfolio of their choosing (here the copied one, as it goes); never the wallet
    seen = (await follower.get(f"/v1/copy/relations/{relation['id']}")).json()
    assert (seen["status"], seen["end_reason"]) == ("ended", "deleted")
    (settled,) = (await leader.get("/v1/copy/settlements")).json()[:1]
    assert (settled["fee"], settled["payout_portfolio_id"]) == (1.899, led["id"])
    assert await wallet_balance(leader) == leader_before  # the subscription's 25 only
    # the subscription ends now: nothing renews for a portfolio that is gone
    (mine,) = (await fan.get("/v1/subscriptions/my")).json()
    assert (mine["id"], mine["status"]) == (paid["id"], "cancelled")
    assert await wallet_balance(fan) == Decimal(35)
    told = await wait_for_inbox(fan, 2, kind="subscription")
    assert told[0]["body"] == f"Your subscription #{paid['id']} is cancelled (portfolio_deleted)."
