"""The `inbox` WebSocket channel: a new notification reaches the owner's sockets at once, and
no one else's; keeping 90 days."""

from typing import Any

from fastapi import FastAPI
from sqlalchemy import select

from papertrade.jobs.run import JobRun
from papertrade.models import Notification
from papertrade.notifications import jobs, service
from papertrade.notifications.kinds import Message
from tests.conftest import User
from tests.notifications.helpers import inbox
from tests.trading_api.helpers import market, set_price
from tests.ws.helpers import socket


def _fill(message: dict[str, Any]) -> bool:
    # A fill's notification (each socket's own "API key created" notice may arrive too)
    return message.get("type") == "notification.created" and message["data"]["kind"] == "fill"


async def test_a_fill_reaches_the_inbox_channel_of_its_owner_only(
    app: FastAPI, live_url: str, user: User, user_factory: object
) -> None:
    other: User = await user_factory()  # type: ignore[operator]
    await set_price(app, "BTCUSDT", "50000")
    pid = (await user.portfolio())["id"]
    async with (
        socket(live_url, await user.api_key()) as mine,
        socket(live_url, await other.api_key()) as theirs,
    ):
        assert (await mine.subscribe("inbox"))["channels"] == [f"inbox:{user.id}"]
        assert (await theirs.subscribe("inbox"))["channels"] == [f"inbox:{other.id}"]
        placed = await market(user, pid, "BTCUSDT", "buy", "0.002")
        live = await mine.wait_for(_fill)
        assert live["channel"] == "inbox"
        assert live["data"]["kind"] == "fill" and live["data"]["data"]["id"] == placed["id"]
        assert "user_id" not in live["data"]
        listed = (await inbox(user))["notifications"][0]
        assert live["data"]["id"] == listed["id"] and live["data"]["title"] == listed["title"]
        await theirs.send(op="ping", id=9)
        assert (await theirs.wait_for(lambda m: m.get("id") == 9))["type"] == "pong"
        assert not any(_fill(m) for m in theirs.seen)  # nothing of mine reached them

        await mine.send(op="unsubscribe", channels=["inbox"], id=3)
        gone = await mine.wait_for(lambda m: m.get("id") == 3)
        assert gone["channels"] == [f"inbox:{user.id}"]


async def test_notifications_older_than_90_days_are_pruned(user: User, app: FastAPI) -> None:
    ctx = app.state.ctx
    async with ctx.transaction() as uow:
        await service.notify_many(uow, [user.id], "system", Message("old"))
        await service.notify_many(uow, [user.id], "system", Message("recent"))
    async with ctx.transaction() as uow:
        rows = list(await uow.session.scalars(select(Notification).where(
            Notification.user_id == user.id).order_by(Notification.id)))  # fmt: skip
        rows[0].created_at -= service.RETENTION_MS + 1000
        rows[1].created_at -= service.RETENTION_MS - 60_000

    async def no_progress(run_id: str, done: float, text: str) -> None:
        return None

    run = JobRun("prune-test", jobs.PRUNE.name, 1, ctx, no_progress)
    result = await jobs.prune_notifications(run)
    assert result["deleted"] >= 1
    assert [n["title"] for n in (await inbox(user))["notifications"]] == ["recent"]
