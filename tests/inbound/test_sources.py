"""Inbound sources: the email provider's Svix-signed events and Finnhub alerts, through one
framework (verified before parsing, stored once, processed in the background, listed)."""

import asyncio
import base64
import time
from datetime import UTC, datetime
from typing import Any

import orjson
from fastapi import FastAPI
from sqlalchemy import select
from standardwebhooks.webhooks import Webhook

from papertrade.config import Settings
from papertrade.models import EmailMessage, InboundEvent
from tests.conftest import User, client_for, running_app, sign_up
from tests.notifications.helpers import wait_for_inbox

SECRET = "whsec_" + base64.b64encode(b"resend-test-signing-key-32-bytes").decode()


def _signed(body: bytes, msg_id: str, at: float | None = None) -> dict[str, str]:
    when = datetime.fromtimestamp(at if at is not None else time.time(), tz=UTC)
    signature = Webhook(SECRET).sign(msg_id, when, body.decode())
    return {
        "svix-id": msg_id,
        "svix-timestamp": str(int(when.timestamp())),
        "svix-signature": signature,
        "content-type": "application/json",
    }


async def _resend(app: FastAPI, event: dict[str, Any], msg_id: str, **kw: Any) -> Any:
    body = orjson.dumps(event)
    headers = kw.get("headers") or _signed(body, msg_id, kw.get("at"))
    async with client_for(app) as provider:
        return await provider.post("/v1/webhook/email/resend", content=body, headers=headers)


async def _suppressed(user: User, within: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + within
    while True:
        state: dict[str, Any] = (await user.get("/v1/user/email")).json()
        if state["suppressed"]:
            return state
        assert time.monotonic() < deadline, state
        await asyncio.sleep(0.05)


async def test_a_hard_bounce_suppresses_the_address_once(isolated_settings: Settings) -> None:
    settings = isolated_settings.model_copy(update={"resend_webhook_secret": SECRET})
    async with running_app(settings) as app:
        user, other = await sign_up(app), await sign_up(app)
        async with app.state.ctx.transaction() as uow:  # mail that went out to each
            for address in (user.email, other.email):
                uow.session.add(
                    EmailMessage(to_address=address, subject="s", body="b", status="sent")
                )
        delivered = {"type": "email.delivered", "data": {"to": [other.email.upper()]}}
        assert (await _resend(app, delivered, "msg_delivered")).status_code == 200
        soft = {
            "type": "email.bounced",
            "data": {"to": [user.email], "bounce": {"type": "Transient"}},
        }
        assert (await _resend(app, soft, "msg_soft")).status_code == 200
        hard = {
            "type": "email.bounced",
            "data": {"to": [user.email], "bounce": {"type": "Permanent"}},
        }
        first = await _resend(app, hard, "msg_hard")
        assert first.status_code == 200 and first.json() == {"ok": True, "duplicate": False}
        state = await _suppressed(user)
        assert state["suppressed_reason"] == "bounced"
        again = await _resend(app, hard, "msg_hard")  # Svix retries with the same id
        assert again.json() == {"ok": True, "duplicate": True}
        async with app.state.ctx.db.reader() as session:
            rows = await session.execute(select(EmailMessage.to_address, EmailMessage.status))
            statuses = {row[0]: row[1] for row in rows}
        assert statuses == {user.email: "bounced", other.email: "delivered"}


async def _mail_status(app: FastAPI, user: User, within: float = 30) -> str:
    """The status of the user's last mail in their history, once the provider's events were
    all handled (in the background)."""
    deadline = time.monotonic() + within
    while True:
        async with app.state.ctx.db.reader() as session:
            waiting = await session.scalar(
                select(InboundEvent.id).where(InboundEvent.processed_at.is_(None)).limit(1)
            )
        if waiting is None:
            break
        assert time.monotonic() < deadline, "inbound events not processed"
        await asyncio.sleep(0.05)
    listed = (await user.get("/v1/user/email/messages")).json()["messages"]
    return str(listed[0]["status"])


async def test_a_delay_a_delivery_and_a_complaint_each_show_in_the_mail_history(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings.model_copy(update={"resend_webhook_secret": SECRET})
    async with running_app(settings) as app:
        user, other = await sign_up(app), await sign_up(app)
        async with app.state.ctx.transaction() as uow:  # a notification mailed to each
            for who in (user, other):
                uow.session.add(
                    EmailMessage(
                        to_address=who.email, user_id=who.id, subject="s", body="b", status="sent"
                    )
                )

        def event(kind: str, who: User) -> dict[str, Any]:
            return {"type": f"email.{kind}", "data": {"to": [who.email], "subject": "s"}}

        assert (await _resend(app, event("delivery_delayed", user), "m1")).status_code == 200
        assert await _mail_status(app, user) == "delayed"
        assert await _mail_status(app, other) == "sent"  # only the delayed address
        await _resend(app, event("delivered", user), "m2")
        assert await _mail_status(app, user) == "delivered"
        await _resend(app, event("delivery_delayed", user), "m3")  # late, out of order
        assert await _mail_status(app, user) == "delivered"
        await _resend(app, event("complained", user), "m4")  # the reader marked it spam
        assert await _mail_status(app, user) == "complained"
        assert (await _suppressed(user))["suppressed_reason"] == "complained"
        await _resend(app, event("delivered", user), "m5")  # a complaint is final
        assert await _mail_status(app, user) == "complained"

        await _resend(app, event("delivery_delayed", other), "m6")
        bounced = {
            "type": "email.bounced",
            "data": {"to": [other.email], "bounce": {"type": "Permanent"}},
        }
        await _resend(app, bounced, "m7")
        assert await _mail_status(app, other) == "bounced"  # a permanent bounce after the delay


async def test_bad_or_stale_signatures_are_refused_before_parsing(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings.model_copy(update={"resend_webhook_secret": SECRET})
    async with running_app(settings) as app:
        user = await sign_up(app)
        event = {"type": "email.complained", "data": {"to": [user.email]}}
        body = orjson.dumps(event)
        forged = _signed(body, "msg_1")
        forged["svix-signature"] = "v1," + base64.b64encode(b"x" * 32).decode()
        stale = _signed(body, "msg_2", at=time.time() - 600)
        garbage = {**_signed(body, "msg_3"), "svix-signature": "nonsense"}
        for headers in (forged, stale, garbage, {"content-type": "application/json"}):
            refused = await _resend(app, event, "unused", headers=headers)
            assert refused.status_code == 401, headers
            assert refused.json()["error"] == "invalid_signature"
        complained = await _resend(app, event, "msg_4")
        assert complained.status_code == 200
        assert (await _suppressed(user))["suppressed_reason"] == "complained"


async def test_a_finnhub_alert_reaches_the_owners_inbox_and_history(
    isolated_settings: Settings,
) -> None:
    async with running_app(isolated_settings) as app:
        owner, other = await sign_up(app), await sign_up(app)
        created = await owner.post("/v1/webhook-sources", json={"provider": "finnhub"})
        assert created.status_code == 201, created.text
        source = created.json()
        assert source["url"].endswith(f"/v1/webhook/finnhub/{source['id']}")
        path = f"/v1/webhook/finnhub/{source['id']}"
        alert = {"id": "a-1", "event": "price", "symbol": "BTCUSDT", "price": 70000}
        async with client_for(app) as finnhub:
            ok = await finnhub.post(
                path, json=alert, headers={"X-Finnhub-Secret": source["secret"]}
            )
            assert ok.status_code == 200 and ok.json()["duplicate"] is False
            again = await finnhub.post(
                path, json=alert, headers={"X-Finnhub-Secret": source["secret"]}
            )
            assert again.json()["duplicate"] is True
            for secret in ("", "wrong", source["secret"] + "x"):
                refused = await finnhub.post(path, json=alert, headers={"X-Finnhub-Secret": secret})
                assert refused.status_code == 401 and refused.json()["error"] == "invalid_signature"
        (note,) = await wait_for_inbox(owner, 1, kind="market_alert")
        assert note["title"] == "Finnhub alert: BTCUSDT price 70000"
        events = (await owner.get(f"/v1/webhook-sources/{source['id']}/events")).json()["events"]
        assert len(events) == 1 and events[0]["outcome"] == "notified"
        assert orjson.loads(events[0]["body"]) == alert
        assert (await inbox_count(other)) == 0
        theirs = await other.get(f"/v1/webhook-sources/{source['id']}/events")
        assert theirs.status_code == 404 and theirs.json()["error"] == "webhook_source_not_found"

        revoked = await owner.delete(f"/v1/webhook-sources/{source['id']}")
        assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
        async with client_for(app) as finnhub:
            gone = await finnhub.post(
                path, json=alert, headers={"X-Finnhub-Secret": source["secret"]}
            )
            assert gone.status_code == 404 and gone.json()["error"] == "webhook_not_found"


async def inbox_count(user: User) -> int:
    return len((await user.get("/v1/inbox")).json()["notifications"])
