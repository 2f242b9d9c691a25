"""The `social` WebSocket channel, over loopback with a real client (`websockets`): a follower
hears each copied fill and skip, both sides hear the copy end and settle, a subscriber hears
its signals and its subscription's renewal and past_due; no one hears another's events."""

from typing import Any

from fastapi import FastAPI

from papertrade.subscriptions.jobs import renew_due
from tests.conftest import User
from tests.copytrading.helpers import follow, leader_and_follower, trades
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


async def _nothing_for(sock: Socket, prefix: str = "") -> None:
    """After a ping round trip, no social message (starting with `prefix`) reached `sock`."""
    await sock.send(op="ping", id=99)
    await sock.wait_for(lambda m: m.get("id") == 99)
    stray = [m for m in sock.seen if m.get("channel") == "social" and m["type"].startswith(prefix)]
    assert stray == [], stray
