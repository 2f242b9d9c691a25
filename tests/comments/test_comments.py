"""Comments on public portfolios through /v1/comments: threads one level deep, newest first,
edit window, who may delete, length limits, rate limit, text stored as given, the owner's
durable notification event."""

from typing import Any

import orjson
from fastapi import FastAPI
from sqlalchemy import select

from papertrade.models import Comment, OutboxEvent
from tests.conftest import User, make_settings, running_app, sign_up
from tests.foundation.helpers import hold_the_window
from tests.strategies.test_api import create as create_strategy


async def comment(user: User, portfolio_id: int, text: str, **extra: Any) -> dict[str, Any]:
    response = await user.post(
        "/v1/comments", json={"portfolio_id": portfolio_id, "text": text, **extra}
    )
    assert response.status_code == 201, response.text
    return dict(response.json())


async def test_thread_newest_first_with_one_level_of_replies(
    app: FastAPI, user_factory: Any
) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    portfolio = await owner.portfolio(name="talk", visibility="public")
    pid = portfolio["id"]
    first = await comment(fan, pid, 'first <b>bold</b> & "quoted"')
    second = await comment(fan, pid, "second")
    reply = await comment(owner, pid, "thanks", parent_id=first["id"])
    deeper = await fan.post(
        "/v1/comments", json={"portfolio_id": pid, "text": "x", "parent_id": reply["id"]}
    )
    assert deeper.status_code == 409 and deeper.json()["error"] == "comment_too_deep"

    listed = (await fan.get("/v1/comments", params={"portfolio_id": pid})).json()
    assert [c["id"] for c in listed] == [second["id"], first["id"]]
    assert listed[1]["text"] == 'first <b>bold</b> & "quoted"'  # as given: pages escape it
    assert [r["id"] for r in listed[1]["replies"]] == [reply["id"]]
    page = (
        await fan.get(
            "/v1/comments", params={"portfolio_id": pid, "before_id": second["id"], "limit": 1}
        )
    ).json()
    assert [c["id"] for c in page] == [first["id"]]

    # The owner is told of the comment, the author of the parent of the reply.
    async with app.state.ctx.db.reader() as session:
        rows = await session.scalars(
            select(OutboxEvent.data).where(OutboxEvent.type == "comment.posted")
        )
        posted = {d["comment_id"]: d for d in map(orjson.loads, rows.all())}
    assert posted[first["id"]]["owner_user_id"] == owner.id
    assert posted[reply["id"]]["parent_author_user_id"] == fan.id


async def test_edit_window_and_who_may_delete(app: FastAPI, user_factory: Any) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    other: User = await user_factory()
    pid = (await owner.portfolio(name="talk", visibility="public"))["id"]
    mine = await comment(fan, pid, "typo")
    edited = await fan.patch(f"/v1/comments/{mine['id']}", json={"text": "fixed"})
    assert edited.status_code == 200 and edited.json()["text"] == "fixed"
    assert edited.json()["edited_at"] is not None
    foreign = await other.patch(f"/v1/comments/{mine['id']}", json={"text": "mine now"})
    assert foreign.status_code == 404 and foreign.json()["error"] == "comment_not_found"
    async with app.state.ctx.transaction() as uow:  # posted 16 minutes ago
        row = await uow.session.get(Comment, mine["id"])
        assert row is not None
        row.created_at -= 16 * 60_000
    late = await fan.patch(f"/v1/comments/{mine['id']}", json={"text": "again"})
    assert late.status_code == 409 and late.json()["error"] == "comment_edit_closed"

    assert (await other.delete(f"/v1/comments/{mine['id']}")).status_code == 404
    reply = await comment(other, pid, "a reply", parent_id=mine["id"])
    assert (await owner.delete(f"/v1/comments/{mine['id']}")).status_code == 200  # the owner
    assert (await other.delete(f"/v1/comments/{reply['id']}")).status_code == 200  # the author
    (gone,) = (await fan.get("/v1/comments", params={"portfolio_id": pid})).json()
    assert gone["deleted"] is True and gone["text"] == ""
    assert gone["replies"][0]["deleted"] is True


async def test_limits(app: FastAPI, user_factory: Any, tmp_path: Any) -> None:
    owner: User = await user_factory()
    pid = (await owner.portfolio(name="talk", visibility="public"))["id"]
    private = (await owner.portfolio(name="mine"))["id"]
    fan: User = await user_factory()
    for text in ("", "   ", "x" * 2001):
        bad = await fan.post("/v1/comments", json={"portfolio_id": pid, "text": text})
        assert bad.status_code == 422 and set(bad.json()) == {"error", "msg"}
    hidden = await fan.post("/v1/comments", json={"portfolio_id": private, "text": "hi"})
    assert hidden.status_code == 404 and hidden.json()["error"] == "portfolio_not_found"
    assert (await comment(fan, pid, "x" * 2000))["text"] == "x" * 2000

    settings = make_settings(
        f"sqlite+aiosqlite:///{tmp_path / 'c.db'}", tmp_path, rate_limit_comments_per_hour=2
    )
    async with running_app(settings) as limited:
        talker = await sign_up(limited)
        room = (await talker.portfolio(name="room", visibility="public"))["id"]
        hold_the_window()  # the hour's three comments count in one window
        for _ in range(2):
            await comment(talker, room, "hello")
        third = await talker.post("/v1/comments", json={"portfolio_id": room, "text": "hello"})
        assert third.status_code == 429 and third.json()["error"] == "rate_limited"
        await talker.client.aclose()


async def test_a_public_thread_is_readable_signed_out_and_nothing_more(
    app: FastAPI, user_factory: Any, anon: Any
) -> None:
    owner: User = await user_factory()
    fan: User = await user_factory()
    public = (await owner.portfolio(name="open book", visibility="public"))["id"]
    private = (await owner.portfolio(name="diary", visibility="private"))["id"]
    sid = (await create_strategy(owner, visibility="public"))["id"]
    said = await comment(fan, public, "nice curve")
    await comment(owner, public, "thanks", parent_id=said["id"])
    on_strategy = await fan.post("/v1/comments", json={"strategy_id": sid, "text": "rules?"})
    assert on_strategy.status_code == 201, on_strategy.text
    owners_own = await owner.post("/v1/comments", json={"portfolio_id": private, "text": "memo"})
    assert owners_own.status_code == 201, owners_own.text

    # Signed out, as the public pages are read: the thread with its replies, as signed in.
    read = await anon.get("/v1/comments", params={"portfolio_id": public})
    assert read.status_code == 200, read.text
    assert [(c["text"], [r["text"] for r in c["replies"]]) for c in read.json()] == [
        ("nice curve", ["thanks"])
    ]
    assert read.json() == (await fan.get("/v1/comments", params={"portfolio_id": public})).json()
    strategy_thread = await anon.get("/v1/comments", params={"strategy_id": sid})
    assert [c["text"] for c in strategy_thread.json()] == ["rules?"]

    # A private portfolio's thread is hidden as from any stranger; writing still needs sign-in.
    hidden = await anon.get("/v1/comments", params={"portfolio_id": private})
    assert hidden.status_code == 404 and hidden.json()["error"] == "portfolio_not_found"
    for method, path, body in (
        ("POST", "/v1/comments", {"portfolio_id": public, "text": "anonymous"}),
        ("PATCH", f"/v1/comments/{said['id']}", {"text": "changed"}),
        ("DELETE", f"/v1/comments/{said['id']}", None),
    ):
        refused = await anon.request(method, path, json=body)
        assert refused.status_code == 401 and refused.json()["error"] == "unauthenticated", path
    assert [
        c["text"] for c in (await anon.get("/v1/comments", params={"portfolio_id": public})).json()
    ] == ["nice curve"]
    # Malformed queries get the documented error signed out too.
    for query in ({"portfolio_id": "abc"}, {"portfolio_id": public, "strategy_id": sid}, {}):
        bad = await anon.get("/v1/comments", params=query)
        assert bad.status_code == 422 and bad.json()["error"] == "validation_error", query
    # A dead session cookie reads as signed out; a bad API key is still refused.
    stale = await anon.get(
        "/v1/comments", params={"portfolio_id": public}, cookies={"pt_session": "gone"}
    )
    assert stale.status_code == 200 and len(stale.json()) == 1
    bad_key = await anon.get(
        "/v1/comments", params={"portfolio_id": public}, headers={"Authorization": "Bearer nope"}
    )
    assert bad_key.status_code == 401
