"""/v1/inbox: fills, liquidations, funding and signals arrive as notifications; list, filter,
page, mark read, delete; nobody sees another user's."""

from decimal import Decimal

from fastapi import FastAPI

from papertrade.engine import risk
from papertrade.notifications import service
from papertrade.notifications.kinds import Message
from tests.conftest import User, client_for
from tests.notifications.helpers import inbox, wait_for_inbox
from tests.trading_api.helpers import market, set_price, until_liquidated


async def test_a_fill_lands_in_the_inbox_unread_and_can_be_read_and_deleted(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "50000")
    pid = (await user.portfolio(name="swing"))["id"]
    placed = await market(user, pid, "BTCUSDT", "buy", "0.002")
    (note,) = await wait_for_inbox(user, 1)
    assert note["kind"] == "fill" and note["portfolio_id"] == pid
    assert note["title"] == "BTCUSDT buy order filled"
    assert note["body"].startswith("Bought 0.002 BTCUSDT at 50,000.0 (market order")
    assert note["data"]["id"] == placed["id"] and note["data"]["portfolio_name"] == "swing"
    assert note["read_at"] is None
    assert (await user.get("/v1/inbox/unread_count")).json() == {"unread_count": 1}

    read = await user.post(f"/v1/inbox/{note['id']}/read")
    assert read.status_code == 200 and read.json()["read_at"] is not None
    assert (await user.get("/v1/inbox/unread_count")).json() == {"unread_count": 0}
    assert (await inbox(user, unread="true"))["notifications"] == []
    assert [n["id"] for n in (await inbox(user, unread="false"))["notifications"]] == [note["id"]]

    assert (await user.delete(f"/v1/inbox/{note['id']}")).status_code == 200
    assert (await inbox(user))["notifications"] == []
    gone = await user.post(f"/v1/inbox/{note['id']}/read")
    assert gone.status_code == 404 and gone.json()["error"] == "notification_not_found"


async def test_nobody_reads_marks_or_deletes_another_users_notifications(
    user: User, user_factory: object, app: FastAPI
) -> None:
    await set_price(app, "ETHUSDT", "3000")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "ETHUSDT", "sell", "0.1")
    (note,) = await wait_for_inbox(user, 1)
    other: User = await user_factory()  # type: ignore[operator]
    assert (await inbox(other))["notifications"] == []
    for response in (
        await other.post(f"/v1/inbox/{note['id']}/read"),
        await other.delete(f"/v1/inbox/{note['id']}"),
    ):
        assert response.status_code == 404
        assert response.json()["error"] == "notification_not_found"
    assert (await other.post("/v1/inbox/read_all", json={})).json() == {"marked": 0}
    assert (await inbox(user))["notifications"][0]["read_at"] is None


async def test_liquidation_and_funding_are_notified(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio(initial_balance="500"))["id"]
    await user.post(f"/v1/portfolios/{pid}/leverage", json={"symbol": "BTCUSDT", "leverage": 50})
    await market(user, pid, "BTCUSDT", "buy", "0.3")
    await risk.settle_funding(
        app.state.ctx, "BTCUSDT", 1_950_000_000_000, Decimal("0.0001"), Decimal("60000")
    )
    funding = await wait_for_inbox(user, 1, kind="funding")
    assert funding[0]["title"] == "BTCUSDT funding paid"
    assert funding[0]["body"] == "Funding paid on BTCUSDT: 1.80 USDT at a rate of +0.0100%."
    position = (await user.get(f"/v1/portfolios/{pid}/positions")).json()
    liquidation_price = position[0]["liquidation_price"]
    await set_price(app, "BTCUSDT", str(int(liquidation_price) - 50))
    await until_liquidated(app, pid)
    (liquidated,) = await wait_for_inbox(user, 1, kind="liquidation")
    assert liquidated["title"] == "BTCUSDT position liquidated"
    kinds = [n["kind"] for n in await wait_for_inbox(user, 4)]
    # newest first: the liquidation's fill, the liquidation, funding, the opening fill
    assert sorted(kinds) == ["fill", "fill", "funding", "liquidation"]


async def test_read_all_by_kind_and_pages_newest_first(user: User, app: FastAPI) -> None:
    async with app.state.ctx.transaction() as uow:
        for i in range(5):
            await service.notify_many(uow, [user.id], "system", Message(f"notice {i}"))
    first = await inbox(user, limit=2)
    assert [n["title"] for n in first["notifications"]] == ["notice 4", "notice 3"]
    assert first["unread_count"] == 5
    second = await inbox(user, limit=2, before_id=first["next_before_id"])
    assert [n["title"] for n in second["notifications"]] == ["notice 2", "notice 1"]
    last = await inbox(user, limit=2, before_id=second["next_before_id"])
    assert [n["title"] for n in last["notifications"]] == ["notice 0"]
    assert last["next_before_id"] is None

    await set_price(app, "SOLUSDT", "150")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "SOLUSDT", "buy", "1")
    await wait_for_inbox(user, 1, kind="fill")
    assert (await user.post("/v1/inbox/read_all", json={"kind": "system"})).json() == {"marked": 5}
    unread = (await inbox(user, unread="true"))["notifications"]
    assert [n["kind"] for n in unread] == ["fill"]
    assert (await user.post("/v1/inbox/read_all", json={})).json() == {"marked": 1}
    assert (await user.get("/v1/inbox/unread_count")).json() == {"unread_count": 0}


async def test_bad_filters_and_bodies_get_the_documented_errors(user: User) -> None:
    unknown = await user.get("/v1/inbox", params={"kind": "gossip"})
    assert unknown.status_code == 422
    assert unknown.json()["error"] == "unknown_notification_kind"
    assert "fill" in unknown.json()["msg"]
    for body in ({"kind": "gossip"}, {"kind": 5}, {"everything": True}):
        response = await user.post("/v1/inbox/read_all", json=body)
        assert response.status_code == 422, body
        assert set(response.json()) == {"error", "msg"}
    huge = await user.post("/v1/inbox/99999999999999/read")
    assert huge.status_code == 422 and huge.json()["error"] == "validation_error"


async def test_an_api_key_reads_the_inbox_and_a_read_key_cannot_change_it(
    user: User, app: FastAPI
) -> None:
    async with app.state.ctx.transaction() as uow:
        await service.notify_many(uow, [user.id], "system", Message("welcome", "hello"))
    key = await user.api_key("read")
    # Making the key is itself a security notification, delivered by the outbox consumer in the
    # background: wait for it, so what the key reads does not depend on that consumer's pace.
    await wait_for_inbox(user, 2)
    async with client_for(app, headers={"Authorization": f"Bearer {key}"}) as client:
        listed = (await client.get("/v1/inbox")).json()["notifications"]
        assert [n["title"] for n in listed] == ["API key created", "welcome"]
        refused = await client.post(f"/v1/inbox/{listed[0]['id']}/read")
        assert refused.status_code == 403
