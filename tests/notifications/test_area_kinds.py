"""The other areas' durable events reach the people they concern through the inbox: a comment
its portfolio's owner, a reply the author replied to, a skipped copy its follower, a
subscription signal its subscriber on the subscription's channels, a feedback answer its
sender, a revenue-share settlement both sides, a paused strategy its owner."""

from decimal import Decimal
from typing import Any

from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.feedback import operator
from papertrade.notifications import service
from papertrade.notifications.kinds import Message
from papertrade.strategies import live
from tests.conftest import User
from tests.copytrading.helpers import follow, leader_and_follower, trades
from tests.copytrading.test_revenue_share import copied_round_trip
from tests.notifications.helpers import inbox, wait_for_inbox
from tests.trading_api.helpers import market, set_price


async def posted(user: User, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = await user.post(path, json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_a_comment_tells_the_owner_and_a_reply_tells_the_author_replied_to(
    app: FastAPI, user_factory: Any
) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    pid = (await owner.portfolio(name="talk", visibility="public"))["id"]
    first = await posted(fan, "/v1/comments", {"portfolio_id": pid, "text": "nice"})
    (told,) = await wait_for_inbox(owner, 1, kind="comment")
    assert (told["title"], told["data"]["comment_id"]) == ("New comment", first["id"])
    fan_id = (await fan.get("/v1/user")).json()["id"]
    code = f"P{pid:07d}"
    assert told["body"] == f"trader{fan_id} commented on portfolio talk ({code})."

    reply = await posted(
        owner, "/v1/comments", {"portfolio_id": pid, "text": "thanks", "parent_id": first["id"]}
    )
    (answered,) = await wait_for_inbox(fan, 1, kind="comment")
    assert (answered["title"], answered["data"]["comment_id"]) == ("New reply", reply["id"])
    # The owner wrote the reply: nobody tells them of their own words.
    assert len((await inbox(owner, kind="comment"))["notifications"]) == 1


async def test_a_copy_skipped_for_the_symbol_list_tells_the_follower_why(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "ETHUSDT", "3000")
    relation = await follow(
        follower, led["id"], mine["id"], mode="fixed_ratio", allocation=1000, symbols=["BTCUSDT"]
    )
    await market(leader, led["id"], "ETHUSDT", "buy", "0.1")
    (row,) = await trades(follower, relation["id"], 1)
    assert row["reason"] == "symbol"
    (told,) = await wait_for_inbox(follower, 1, kind="copy")
    assert told["title"] == "Copy skipped: ETHUSDT"
    assert told["body"].startswith(f"A ETHUSDT trade of {led['code']} was not copied: symbol.")
    assert told["data"]["relation_id"] == relation["id"]
    assert (await inbox(leader, kind="copy"))["notifications"] == []


async def test_a_free_subscription_signal_goes_to_the_inbox_only(
    app: FastAPI, user_factory: Any
) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    pid = (await owner.portfolio(name="signals", visibility="public"))["id"]
    subscription = await posted(fan, "/v1/subscribe", {"portfolio_id": pid})
    await set_price(app, "BTCUSDT", "50000")
    await market(owner, pid, "BTCUSDT", "buy", "0.002")
    await market(owner, pid, "BTCUSDT", "sell", "0.002")  # free tier: closed trades only
    told, welcomed = await wait_for_inbox(fan, 2, kind="subscription")  # newest first
    assert told["title"] == "Signal: BTCUSDT close"
    assert told["body"] == "signals closed 0.002 BTCUSDT at 50,000.0, PnL 0.00 USDT (+0.00 %)."
    assert welcomed["title"] == "Subscription subscribed"
    assert welcomed["body"] == f"Your subscription #{subscription['id']} is active (subscribed)."
    assert len((await inbox(fan, kind="subscription"))["notifications"]) == 2  # not the open


async def test_a_source_that_allows_no_inbox_keeps_the_message_out_of_it(
    user: User, app: FastAPI
) -> None:
    # A paid subscription may choose Telegram alone: its signals then stay out of the inbox,
    # whatever the user's own choice for the kind.
    only_telegram = Message("Signal: ETHUSDT long", channels=frozenset({"telegram"}))
    inbox_too = Message("Signal: ETHUSDT close", channels=frozenset({"inbox", "telegram"}))
    async with app.state.ctx.transaction() as uow:
        await service.notify_many(uow, [user.id], "subscription", only_telegram)
        await service.notify_many(uow, [user.id], "subscription", inbox_too)
    listed = (await inbox(user, kind="subscription"))["notifications"]
    assert [n["title"] for n in listed] == ["Signal: ETHUSDT close"]


async def test_an_operators_answer_to_feedback_reaches_the_senders_inbox(
    user: User, app: FastAPI, settings: Settings
) -> None:
    sent = await posted(user, "/v1/feedback", {"category": "idea", "text": "dark mode"})
    assert await operator.answer(settings, sent["id"], by="ops", text="Shipped today") == (
        f"feedback #{sent['id']} answered by ops"
    )
    (told,) = await wait_for_inbox(user, 1, kind="feedback")
    assert told["title"] == f"Your feedback #{sent['id']} was answered"
    assert told["body"] == "Shipped today"


async def test_a_revenue_share_settlement_tells_the_follower_and_the_leader(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    _, _, relation = await copied_round_trip(app, leader, follower)
    ended = await follower.post(
        f"/v1/copy/relations/{relation['id']}/unfollow", json={"close_positions": True}
    )
    assert ended.status_code == 200, ended.text
    for side in (follower, leader):
        told = await wait_for_inbox(side, 2, kind="copy")  # the relation ended, and settled
        (settled,) = [n for n in told if n["title"] == "Revenue share settled"]
        # docs/social.md's worked example: 10 % of 18.99 above a mark of 0.
        assert settled["body"] == (
            f"The copy of {relation['leader_portfolio_code']} (unfollow): net PnL +18.99 USDT, "
            "high-water mark 0.00 → 18.99, 10 % share: fee 1.90 USDT."
        )
        assert settled["data"]["relation_id"] == relation["id"]
        assert Decimal(settled["data"]["fee"]) == Decimal("1.899")


async def test_a_deployment_that_fails_is_paused_and_tells_its_owner_why(
    user: User, app: FastAPI
) -> None:
    portfolio = await user.portfolio(name="doomed")
    strategy = await posted(
        user,
        "/v1/strategies",
        {
            "kind": "dsl",
            "name": "always long",
            "source": "symbol BTCUSDT\ntimeframe 1m\nwhen close > 0 then buy 0.01 qty\n",
        },
    )
    deployed = await posted(
        user, f"/v1/strategies/{strategy['id']}/deployments", {"portfolio_id": portfolio["id"]}
    )
    # Deleting the portfolio under a running deployment makes its next bar fail.
    assert (await user.delete(f"/v1/portfolios/{portfolio['id']}")).status_code == 200
    await live.evaluate_due(app.state.ctx)
    (told,) = await wait_for_inbox(user, 1, kind="strategy")
    assert told["title"] == "Strategy paused"
    assert told["body"].startswith(
        f"Deployment #{deployed['id']} of strategy {strategy['code']} was paused: "
    )
    assert "Portfolio not found" in told["body"]
    assert told["data"] == {
        "strategy_id": strategy["id"],
        "deployment_id": deployed["id"],
        "portfolio_name": "doomed",
        "portfolio_code": portfolio["code"],
        "link": f"/s/{strategy['code']}",
    }


async def test_a_leader_hears_of_a_new_copier_and_an_owner_of_a_new_subscriber(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    await follower.patch("/v1/user/profile", json={"display_name": "Copy Cat"})
    await follow(follower, led["id"], mine["id"], mode="fixed_ratio", allocation=1000)
    (copier,) = await wait_for_inbox(leader, 1, kind="audience")
    code = led["code"]
    assert copier["title"] == f"New copier of {code}"
    assert copier["body"] == (
        f"Copy Cat started copying {led['name']} ({code}) with 1,000.00 USDT (a fixed ratio)."
    )
    assert copier["link"] == f"/p/{code}"
    await posted(follower, "/v1/subscribe", {"portfolio_id": led["id"]})
    subscriber, _ = await wait_for_inbox(leader, 2, kind="audience")
    assert subscriber["body"] == f"Copy Cat subscribed to your portfolio {led['name']} ({code})."
    assert (await inbox(follower, kind="audience"))["notifications"] == []
