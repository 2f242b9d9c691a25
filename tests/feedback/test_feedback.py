"""Feedback: submitted with page and version, listed with status, answered by an operator (the
answer reaches the user and the inbox's durable event), rate-limited per user."""

import orjson
from fastapi import FastAPI
from sqlalchemy import select

from papertrade.config import Settings
from papertrade.feedback import operator
from papertrade.models import OutboxEvent
from tests.conftest import User, running_app, sign_up
from tests.foundation.helpers import hold_the_window

BODY = {
    "category": "bug",
    "text": "The chart\\nfreezes",
    "page": "/app/portfolios/3",
    "app_version": "2026.11.2",
}


async def test_submit_list_and_an_operators_answer(
    user: User, user_factory: object, app: FastAPI, settings: Settings
) -> None:
    sent = await user.post("/v1/feedback", json=BODY)
    assert sent.status_code == 201, sent.text
    row = sent.json()
    assert (row["status"], row["page"], row["app_version"], row["answer"]) == (
        "open",
        "/app/portfolios/3",
        "2026.11.2",
        None,
    )
    listed = await operator.listing(settings, "open", 1000)
    assert f"#{row['id']} [open] bug user {user.id}" in listed
    assert await operator.answer(settings, row["id"], by="ops-ann", text="Fixed in 2026.11.3") == (
        f"feedback #{row['id']} answered by ops-ann"
    )
    mine = (await user.get("/v1/feedback")).json()
    assert (mine[0]["status"], mine[0]["answer"]) == ("answered", "Fixed in 2026.11.3")
    async with app.state.ctx.db.reader() as session:
        events = [
            orjson.loads(e.data)
            for e in await session.scalars(
                select(OutboxEvent).where(OutboxEvent.type == "feedback.answered")
            )
        ]
    assert {"user_id": user.id, "feedback_id": row["id"], "answer": "Fixed in 2026.11.3"} in events
    assert (await operator.answer(settings, 2147483647, by="x", text="y")).startswith("refused")


async def test_anothers_feedback_is_404(user: User, app: FastAPI) -> None:
    row = (await user.post("/v1/feedback", json=BODY)).json()
    other = await sign_up(app)
    try:
        response = await other.get(f"/v1/feedback/{row['id']}")
        assert response.status_code == 404 and response.json()["error"] == "feedback_not_found"
        assert (await other.get("/v1/feedback")).json() == []
    finally:
        await other.client.aclose()
    assert (await user.get(f"/v1/feedback/{row['id']}")).json()["text"] == BODY["text"]


async def test_bad_feedback_is_422(user: User) -> None:
    for body in [
        {**BODY, "category": "rant"},
        {**BODY, "text": ""},
        {**BODY, "text": "x" * 4001},
        {**BODY, "page": "p" * 301},
        {**BODY, "extra": 1},
    ]:
        response = await user.post("/v1/feedback", json=body)
        assert response.status_code == 422, body


async def test_feedback_is_rate_limited_per_user(settings: Settings) -> None:
    limited = settings.model_copy(update={"rate_limit_feedback_per_hour": 2})
    async with running_app(limited) as app:
        user = await sign_up(app)
        hold_the_window()  # the three count in one hour's window
        codes = [(await user.post("/v1/feedback", json=BODY)).status_code for _ in range(3)]
        await user.client.aclose()
    assert codes == [201, 201, 429]
