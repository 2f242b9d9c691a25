"""Comments on public strategies through /v1/comments: the same thread as a portfolio's (newest
first, one level of replies, edit window, the owner deletes any), a private strategy hidden,
exactly one of portfolio_id and strategy_id, the length and rate limits, and the strategy's owner
told in the inbox."""

from typing import Any

from fastapi import FastAPI

from papertrade.models import Comment
from tests.conftest import User, make_settings, running_app, sign_up
from tests.foundation.helpers import hold_the_window
from tests.notifications.helpers import inbox, wait_for_inbox
from tests.strategies.test_api import create as create_strategy


async def comment(user: User, strategy_id: int, text: str, **extra: Any) -> dict[str, Any]:
    response = await user.post(
        "/v1/comments", json={"strategy_id": strategy_id, "text": text, **extra}
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_a_strategy_thread_and_its_owners_inbox(app: FastAPI, user_factory: Any) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    sid = (await create_strategy(owner, visibility="public"))["id"]
    # A portfolio's thread stays its own, even with the same number as the strategy.
    pid = (await owner.portfolio(name="talk", visibility="public"))["id"]
    elsewhere = await fan.post("/v1/comments", json={"portfolio_id": pid, "text": "p"})
    assert elsewhere.status_code == 201

    first = await comment(fan, sid, 'does <script>alert(1)</script> & "this" work?')
    assert (first["strategy_id"], first["portfolio_id"]) == (sid, None)
    second = await comment(fan, sid, "second")
    reply = await comment(owner, sid, "yes", parent_id=first["id"])
    deeper = await fan.post(
        "/v1/comments", json={"strategy_id": sid, "text": "x", "parent_id": reply["id"]}
    )
    assert deeper.status_code == 409 and deeper.json()["error"] == "comment_too_deep"
    # A reply names a comment of the same thread.
    across = await fan.post(
        "/v1/comments",
        json={"portfolio_id": pid, "text": "x", "parent_id": first["id"]},
    )
    assert across.status_code == 404 and across.json()["error"] == "comment_not_found"

    listed = (await fan.get("/v1/comments", params={"strategy_id": sid})).json()
    assert [c["id"] for c in listed] == [second["id"], first["id"]]
    assert listed[1]["text"] == 'does <script>alert(1)</script> & "this" work?'
    assert [r["id"] for r in listed[1]["replies"]] == [reply["id"]]
    page = (
        await fan.get("/v1/comments", params={"strategy_id": sid, "before_id": second["id"]})
    ).json()
    assert [c["id"] for c in page] == [first["id"]]
    (on_portfolio,) = (await fan.get("/v1/comments", params={"portfolio_id": pid})).json()
    assert on_portfolio["text"] == "p"

    # The owner hears of each comment on the strategy; the fan of the owner's reply.
    told = await wait_for_inbox(owner, 3, kind="comment")
    bodies = {n["data"]["comment_id"]: n["body"] for n in told}
    # Named in words: who wrote, on which strategy (name and code), linking to its page.
    fan_name = f"trader{(await fan.get('/v1/user')).json()['id']}"
    owner_name = f"trader{(await owner.get('/v1/user')).json()['id']}"
    strategy = (await owner.get(f"/v1/strategies/{sid}")).json()
    on = f"strategy {strategy['name']} ({strategy['code']})"
    assert bodies[first["id"]] == f"{fan_name} commented on {on}."
    assert bodies[second["id"]] == f"{fan_name} commented on {on}."
    assert {n["link"] for n in told if n["data"]["comment_id"] in bodies} >= {
        f"/s/{strategy['code']}"
    }
    assert told[0]["link"] == f"/s/{strategy['code']}"  # the newest: the second on the strategy
    (answered,) = await wait_for_inbox(fan, 1, kind="comment")
    assert (answered["title"], answered["body"]) == (
        "New reply",
        f"{owner_name} replied to a comment on {on}.",
    )
    assert listed[1]["author_name"] == fan_name
    assert reply["id"] not in {n["data"]["comment_id"] for n in told}  # not of their own words


async def test_edit_delete_and_a_private_strategy(app: FastAPI, user_factory: Any) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    other: User = await user_factory()
    sid = (await create_strategy(owner, visibility="public"))["id"]
    mine = await comment(fan, sid, "typo")
    await wait_for_inbox(owner, 1, kind="comment")
    edited = await fan.patch(f"/v1/comments/{mine['id']}", json={"text": "fixed"})
    assert edited.status_code == 200 and edited.json()["text"] == "fixed"
    async with app.state.ctx.transaction() as uow:  # posted 16 minutes ago
        row = await uow.session.get(Comment, mine["id"])
        assert row is not None
        row.created_at -= 16 * 60_000
    late = await fan.patch(f"/v1/comments/{mine['id']}", json={"text": "again"})
    assert late.status_code == 409 and late.json()["error"] == "comment_edit_closed"
    assert (await other.delete(f"/v1/comments/{mine['id']}")).status_code == 404
    assert (await owner.delete(f"/v1/comments/{mine['id']}")).status_code == 200  # the owner
    (gone,) = (await fan.get("/v1/comments", params={"strategy_id": sid})).json()
    assert (gone["deleted"], gone["text"]) == (True, "")

    # Made private: the thread is the owner's alone; to others the strategy is not there.
    assert (await owner.patch(f"/v1/strategies/{sid}", json={"visibility": "private"})).is_success
    hidden = await fan.post("/v1/comments", json={"strategy_id": sid, "text": "hi"})
    assert hidden.status_code == 404 and hidden.json()["error"] == "strategy_not_found"
    listed = await fan.get("/v1/comments", params={"strategy_id": sid})
    assert listed.status_code == 404 and listed.json()["error"] == "strategy_not_found"
    kept = await owner.post("/v1/comments", json={"strategy_id": sid, "text": "note to self"})
    assert kept.status_code == 201
    # Of the owner's own words nobody tells the owner: the fan's comment only.
    (only,) = (await inbox(owner, kind="comment"))["notifications"]
    assert only["data"]["comment_id"] == mine["id"]


async def test_exactly_one_of_portfolio_and_strategy(user_factory: Any) -> None:
    owner: User = await user_factory()
    sid = (await create_strategy(owner, visibility="public"))["id"]
    pid = (await owner.portfolio(name="talk", visibility="public"))["id"]
    for target in ({"portfolio_id": pid, "strategy_id": sid}, {}):
        posted = await owner.post("/v1/comments", json={"text": "hi", **target})
        assert posted.status_code == 422
        assert posted.json()["error"] == "validation_error"
        assert "exactly one of portfolio_id or strategy_id" in posted.json()["msg"]
        listed = await owner.get("/v1/comments", params=target)
        assert listed.status_code == 422
        assert listed.json() == {
            "error": "validation_error",
            "msg": "give exactly one of portfolio_id or strategy_id",
        }


async def test_length_and_one_rate_limit_for_portfolios_and_strategies(
    user_factory: Any, tmp_path: Any
) -> None:
    owner: User = await user_factory()
    sid = (await create_strategy(owner, visibility="public"))["id"]
    for text in ("", "   ", "x" * 2001):
        bad = await owner.post("/v1/comments", json={"strategy_id": sid, "text": text})
        assert bad.status_code == 422 and set(bad.json()) == {"error", "msg"}
    assert (await comment(owner, sid, "x" * 2000))["text"] == "x" * 2000

    settings = make_settings(
        f"sqlite+aiosqlite:///{tmp_path / 'c.db'}", tmp_path, rate_limit_comments_per_hour=2
    )
    async with running_app(settings) as limited:
        talker = await sign_up(limited)
        room = (await talker.portfolio(name="room", visibility="public"))["id"]
        ours = (await create_strategy(talker, visibility="public"))["id"]
        hold_the_window()  # the hour's three comments count in one window
        posted = await talker.post("/v1/comments", json={"portfolio_id": room, "text": "hello"})
        assert posted.status_code == 201
        await comment(talker, ours, "hello")
        third = await talker.post("/v1/comments", json={"strategy_id": ours, "text": "hello"})
        assert third.status_code == 429 and third.json()["error"] == "rate_limited"
        assert int(third.headers["Retry-After"]) > 0
        await talker.client.aclose()
