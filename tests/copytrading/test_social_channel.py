"""The `social` WebSocket channel, over loopback with a real client (`websockets`): a follower
hears each copied fill and skip, both sides hear the copy end and settle, a subscriber hears
its signals and its subscription's renewal and past_due, an owner hears the comments on their
portfolio or strategy and an author the replies to theirs and their deletion; no one hears
another's events, nor their own doings."""

from typing import Any

from fastapi import FastAPI

from papertrade.subscriptions.jobs import renew_due
from tests.conftest import User
from tests.copytrading.helpers import follow, leader_and_follower, trades
from tests.strategies.test_api import create as create_strategy
from tests.subscriptions.test_subscriptions import expire, fund_wallet, priced_portfolio, subscribe
from tests.trading_api.helpers import market, set_price
from tests.ws.helpers import Socket, socket


def social(kind: str, **fields: Any) -> Any:
    def match(message: dict[str, Any]) -> bool:
        data = message.get("data") or {}
        return (
            message.get("channel") == "social"
            and message.get("type") == kind
            and all(data.get(k) == v for k, v in fields.items())
        )

    return match


async def test_copy_events_reach_follower_and_leader_sockets(
    app: FastAPI, live_url: str, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    stranger: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "BTCUSDT", "50000")
    await set_price(app, "ETHUSDT", "3000")
    relation = await follow(
        follower,
        led["id"],
        mine["id"],
        mode="fixed_amount",
        amount=100,
        allocation=1000,
        leverage=10,
    )
    async with (
        socket(live_url, await follower.api_key()) as theirs,
        socket(live_url, await leader.api_key()) as lead,
        socket(live_url, await stranger.api_key()) as other,
    ):
        for sock, user in ((theirs, follower), (lead, leader), (other, stranger)):
            assert (await sock.subscribe("social"))["channels"] == [f"social:{user.id}"]
        bought = await market(leader, led["id"], "BTCUSDT", "buy", "0.01")
        filled = await theirs.wait_for(social("copy.filled", leader_order_id=bought["id"]))
        data = filled["data"]
        assert data["relation_id"] == relation["id"] and data["portfolio_id"] == mine["id"]
        assert (data["leg"], data["symbol"], data["side"]) == ("open", "BTCUSDT", "buy")
        assert data["quantity"] == 0.02 and data["price"] == 50000 and data["commission"] == 0.5
        (copied,) = await trades(follower, relation["id"], 1)
        assert copied["follower_order_id"] == data["follower_order_id"]

        paused = await follower.post(f"/v1/copy/relations/{relation['id']}/pause")
        assert paused.status_code == 200
        eth = await market(leader, led["id"], "ETHUSDT", "buy", "0.1")
        skipped = await theirs.wait_for(social("copy.skipped", leader_order_id=eth["id"]))
        assert skipped["data"]["reason"] == "paused"

        await set_price(app, "BTCUSDT", "51000")
        ended = await follower.post(f"/v1/copy/relations/{relation['id']}/unfollow", json={})
        assert ended.status_code == 200, ended.text
        for sock in (theirs, lead):  # both sides: the end and the settlement with its inputs
            await sock.wait_for(social("copy.ended", relation_id=relation["id"], reason="unfollow"))
            settled = await sock.wait_for(social("copy.settled", relation_id=relation["id"]))
            assert settled["data"]["reason"] == "unfollow" and settled["data"]["pct"] == 10
        await _nothing_for(other)


async def test_subscription_signals_renewal_and_past_due_reach_the_subscriber(
    app: FastAPI, live_url: str, user_factory: Any
) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    portfolio = await priced_portfolio(owner, "25")
    await fund_wallet(fan, "30")
    async with (
        socket(live_url, await fan.api_key()) as sock,
        socket(live_url, await owner.api_key()) as owners,
    ):
        await sock.subscribe("social")
        await owners.subscribe("social")
        sub = await subscribe(fan, portfolio["id"], tier="paid", events=["open", "close"])
        await sock.wait_for(social("subscription.changed", subscription_id=sub["id"]))
        await set_price(app, "ETHUSDT", "3000")
        await market(owner, portfolio["id"], "ETHUSDT", "buy", "0.1")
        signal = await sock.wait_for(social("subscription.signal", subscription_id=sub["id"]))
        assert (signal["data"]["event"], signal["data"]["symbol"]) == ("open", "ETHUSDT")
        assert signal["data"]["price"] == 3000

        await expire(app, sub["id"])
        await renew_due(app.state.ctx)  # 5 left, 25 due
        due = await sock.wait_for(social("subscription.changed", what="past_due"))
        assert due["data"]["status"] == "past_due"
        await fund_wallet(fan, "20")
        await renew_due(app.state.ctx)
        renewed = await sock.wait_for(social("subscription.changed", what="renewed"))
        assert renewed["data"]["status"] == "active"
        # The owner's socket hears nothing of the fan's subscription.
        await _nothing_for(owners, "subscription.")


async def test_comments_reach_the_owner_and_the_author_replied_to(
    app: FastAPI, live_url: str, user_factory: Any
) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    stranger: User = await user_factory()
    pid = (await owner.portfolio(name="talk", visibility="public"))["id"]
    sid = (await create_strategy(owner, visibility="public"))["id"]

    async def posted(user: User, **body: Any) -> int:
        response = await user.post("/v1/comments", json=body)
        assert response.status_code == 201, response.text
        return int(response.json()["id"])

    async with (
        socket(live_url, await owner.api_key()) as owners,
        socket(live_url, await fan.api_key()) as fans,
        socket(live_url, await stranger.api_key()) as other,
    ):
        for sock in (owners, fans, other):
            await sock.subscribe("social")
        text = '<b>nice</b> & "bold"'  # user text: the socket says which comment, not what
        first = await posted(fan, portfolio_id=pid, text=text)
        heard = await owners.wait_for(social("comment.posted", comment_id=first))
        assert heard["data"] == {
            "comment_id": first,
            "portfolio_id": pid,
            "strategy_id": None,
            "author_user_id": fan.id,
            "owner_user_id": owner.id,
            "parent_author_user_id": None,
            "author_name": f"trader{fan.id}",  # public names (never an address), for the inbox
            "target_name": "talk",
        }
        # The thread the client re-reads has the words, exactly as written.
        (listed,) = (await owner.get("/v1/comments", params={"portfolio_id": pid})).json()
        assert (listed["id"], listed["text"]) == (first, text)

        reply = await posted(owner, portfolio_id=pid, text="thanks", parent_id=first)
        answered = await fans.wait_for(social("comment.posted", comment_id=reply))
        assert answered["data"]["parent_author_user_id"] == fan.id

        on_strategy = await posted(fan, strategy_id=sid, text="how does it size?")
        heard = await owners.wait_for(social("comment.posted", comment_id=on_strategy))
        assert (heard["data"]["strategy_id"], heard["data"]["portfolio_id"]) == (sid, None)

        # The owner deletes the fan's comment; the fan deletes their own: the other one hears.
        removed = await owner.delete(f"/v1/comments/{first}")
        assert removed.status_code == 200, removed.text
        gone = await fans.wait_for(social("comment.deleted", comment_id=first))
        assert gone["data"]["deleted_by_user_id"] == owner.id
        withdrawn = await fan.delete(f"/v1/comments/{on_strategy}")
        assert withdrawn.status_code == 200, withdrawn.text
        gone = await owners.wait_for(social("comment.deleted", comment_id=on_strategy))
        assert gone["data"]["strategy_id"] == sid and gone["data"]["author_user_id"] == fan.id

        # Nobody heard their own doings, and the stranger heard nothing.
        await _nothing_for(other)
        for sock, user in ((owners, owner), (fans, fan)):
            await sock.send(op="ping", id=98)
            await sock.wait_for(lambda m: m.get("id") == 98)
            own = [m for m in sock.seen if m.get("channel") == "social" and _done_by(m, user.id)]
            assert own == [], own


def _done_by(message: dict[str, Any], user_id: int) -> bool:
    """Whether a comment message tells of something `user_id` did."""
    doer = {"comment.posted": "author_user_id", "comment.deleted": "deleted_by_user_id"}
    field = doer.get(str(message.get("type")))
    return field is not None and message["data"].get(field) == user_id


async def _nothing_for(sock: Socket, prefix: str = "") -> None:
    """After a ping round trip, no social message (starting with `prefix`) reached `sock`."""
    await sock.send(op="ping", id=99)
    await sock.wait_for(lambda m: m.get("id") == 99)
    stray = [m for m in sock.seen if m.get("channel") == "social" and m["type"].startswith(prefix)]
    assert stray == [], stray
