"""At most 20 notification mails an hour (B4): the rest are held, then sent together in one mail
an hour later; none is lost or sent twice, and the history says which were held."""

import asyncio

from fastapi import FastAPI
from sqlalchemy import select, update

from papertrade.config import Settings
from papertrade.mail import digest
from papertrade.mail import service as mail_service
from papertrade.mail.jobs import DIGEST
from papertrade.models import EmailMessage
from tests.conftest import sign_up
from tests.mail.helpers import mail_app, text_of
from tests.mail.test_digest import _mail_system, _notify


async def _statuses(app: FastAPI, user_id: int) -> dict[str, list[str]]:
    async with app.state.ctx.db.reader() as session:
        rows = await session.execute(
            select(EmailMessage.subject, EmailMessage.status)
            .where(EmailMessage.user_id == user_id)
            .order_by(EmailMessage.id)
        )
        found: dict[str, list[str]] = {}
        for subject, status in rows:
            found.setdefault(status, []).append(subject)
        return found


async def test_mail_past_twenty_an_hour_is_held_and_then_sent_as_one(
    isolated_settings: Settings,
) -> None:
    quiet = isolated_settings.model_copy(update={"mail_digest_every_s": 0})  # the test runs it
    async with mail_app(quiet) as (app, sink):
        user, calm = await sign_up(app), await sign_up(app)
        await _mail_system(user, "instant")
        await _mail_system(calm, "instant")
        for n in range(1, 24):
            await _notify(app, [user], f"Signal {n}")
        await _notify(app, [calm], "Only one")

        first = await sink.wait_for(user.email, 20)
        assert [m["Subject"] for m in first] == [f"Signal {n}" for n in range(1, 21)]
        assert len(await sink.wait_for(calm.email)) == 1  # the limit is each user's own
        statuses = await _statuses(app, user.id)
        assert statuses["held"] == ["Signal 21", "Signal 22", "Signal 23"]

        # Not before the oldest held mail is an hour old.
        async with app.state.ctx.transaction() as uow:
            assert await digest.send_held(uow, "http://test") == 0
        async with app.state.ctx.transaction() as uow:
            await uow.session.execute(
                update(EmailMessage)
                .where(EmailMessage.status == mail_service.HELD)
                .values(created_at=EmailMessage.created_at - mail_service.HOUR_MS)
            )

        await app.state.jobs.enqueue(DIGEST)
        together = (await sink.wait_for(user.email, 21))[20]
        assert together["Subject"] == "Papertrade: 3 more notifications"
        body = text_of(together)
        assert "More than 20 notifications arrived within an hour" in body
        assert all(f"- Signal {n} (" in body for n in (21, 22, 23))
        assert "/app/inbox" in body
        assert together["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"

        # Held mail of a user who then turned notification mail off is not sent.
        async with app.state.ctx.transaction() as uow:
            for n in (1, 2):
                mail_service.queue(uow, calm.email, f"Quiet {n}", ".", user_id=calm.id, held=True)
        async with app.state.ctx.transaction() as uow:
            await uow.session.execute(
                update(EmailMessage)
                .where(EmailMessage.status == mail_service.HELD)
                .values(created_at=EmailMessage.created_at - mail_service.HOUR_MS)
            )
        await _mail_system(calm, "off")
        async with app.state.ctx.transaction() as uow:
            assert await digest.send_held(uow, "http://test") == 0
        assert (await _statuses(app, calm.id))["digested"] == ["Quiet 1", "Quiet 2"]

        # Sent once: a second run finds nothing held, and the history tells what happened.
        async with app.state.ctx.transaction() as uow:
            assert await digest.send_held(uow, "http://test") == 0
        await asyncio.sleep(0.2)
        assert len(sink.to(user.email)) == 21
        history = (await user.get("/v1/user/email/messages", params={"limit": 200})).json()
        by_subject = {m["subject"]: m["status"] for m in history["messages"]}
        assert {by_subject[f"Signal {n}"] for n in (21, 22, 23)} == {"digested"}
        assert by_subject["Papertrade: 3 more notifications"] in {"handover", "sent"}
        # Every one of them is in the inbox all along.
        inbox = (await user.get("/v1/inbox", params={"kind": "system", "limit": 50})).json()
        assert len(inbox["notifications"]) == 23
