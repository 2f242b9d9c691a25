"""Daily email digests: users who set notification mail to `daily` get one mail a day listing
their unread notifications of the kinds they mail, with the unsubscribe links; instant users
are unaffected, suppressed addresses get none, and a day's digest is never sent twice."""

from urllib.parse import urlsplit

from fastapi import FastAPI
from sqlalchemy import select, update

from papertrade.config import Settings
from papertrade.mail import digest
from papertrade.mail.jobs import DIGEST
from papertrade.models import EmailDigest, EmailMessage, EmailSuppression, Notification
from papertrade.notifications import service as notifications
from papertrade.notifications.kinds import Message
from tests.conftest import User, client_for, sign_up
from tests.mail.helpers import link_in, mail_app, text_of


async def _mail_system(user: User, frequency: str) -> None:
    chose = await user.client.put(
        "/v1/inbox/preferences",
        json={"preferences": {"system": {"email": True}}},
        headers=user.write_headers(),
    )
    assert chose.status_code == 200, chose.text
    set_to = await user.client.put(
        "/v1/user/email/frequency", json={"frequency": frequency}, headers=user.write_headers()
    )
    assert set_to.status_code == 200, set_to.text
    assert set_to.json()["frequency"] == frequency


async def _notify(app: FastAPI, users: list[User], title: str) -> None:
    async with app.state.ctx.transaction() as uow:
        message = Message(title, f"{title}: the details.", {})
        await notifications.notify_many(uow, [u.id for u in users], "system", message)


async def _queued_to(app: FastAPI, address: str) -> list[str]:
    async with app.state.ctx.db.reader() as session:
        rows = await session.scalars(
            select(EmailMessage.subject).where(EmailMessage.to_address == address)
        )
        return list(rows)


async def test_a_daily_digest_lists_the_unread_ones_once(isolated_settings: Settings) -> None:
    # The test runs the job itself: a scheduled run (taskiq's first comes when the scheduler
    # starts) between the sign-ups and the notifications would count as today's digest.
    quiet = isolated_settings.model_copy(update={"mail_digest_every_s": 0})
    async with mail_app(quiet) as (app, sink):
        daily, instant, suppressed = [await sign_up(app) for _ in range(3)]
        await _mail_system(daily, "daily")
        await _mail_system(instant, "instant")
        await _mail_system(suppressed, "daily")
        async with app.state.ctx.transaction() as uow:
            uow.session.add(EmailSuppression(address=suppressed.email, reason="bounced"))

        for title in ("Maintenance at 02:00", "New symbols listed", "Funding times change"):
            await _notify(app, [daily, instant, suppressed], title)
        # daily users get no mail per notification; instant ones do
        assert await _queued_to(app, daily.email) == []
        assert len(await sink.wait_for(instant.email, 3)) == 3
        first = (await daily.get("/v1/inbox", params={"kind": "system"})).json()
        oldest = first["notifications"][-1]["id"]
        assert (await daily.post(f"/v1/inbox/{oldest}/read")).status_code == 200

        await app.state.jobs.enqueue(DIGEST)
        (mail,) = await sink.wait_for(daily.email)
        assert mail["Subject"] == "Papertrade: 2 unread notifications today"
        body = text_of(mail)
        assert "- Funding times change (" in body and "- New symbols listed (" in body
        assert "Maintenance at 02:00" not in body  # read already
        assert "/app/inbox" in body
        assert mail["Message-ID"].startswith("<mail-")
        assert mail["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"

        # A second run the same day sends nothing; nor to the suppressed address.
        async with app.state.ctx.transaction() as uow:
            again = await digest.send_due(uow, "http://test")
        assert again == {"sent": 0, "suppressed": 0, "nothing_unread": 0}
        assert await _queued_to(app, suppressed.email) == []
        assert len(await _queued_to(app, instant.email)) == 3  # instant users get no digest

        # A day later (everything so far moved a day back): only what arrived since the last
        # digest is listed.
        async with app.state.ctx.transaction() as uow:
            await uow.session.execute(
                update(EmailDigest).values(last_sent_at=EmailDigest.last_sent_at - digest.DAY_MS)
            )
            await uow.session.execute(
                update(Notification).values(created_at=Notification.created_at - digest.DAY_MS)
            )
        await _notify(app, [daily], "Leaderboard reset")
        await app.state.jobs.enqueue(DIGEST)
        second = (await sink.wait_for(daily.email, 2))[1]
        assert second["Subject"] == "Papertrade: 1 unread notification today"
        assert "Leaderboard reset" in text_of(second) and "New symbols" not in text_of(second)

        # The digest's own unsubscribe link turns notification mail off.
        link = urlsplit(link_in(second, "/v1/email/unsubscribe"))
        async with client_for(app) as browser:
            done = await browser.get(f"{link.path}?{link.query}")
        assert done.json() == {"unsubscribed": "digest"}
        assert (await daily.get("/v1/user/email")).json()["frequency"] == "off"
        await _notify(app, [daily], "After unsubscribing")
        assert len(await _queued_to(app, daily.email)) == 2

        history = (await daily.get("/v1/user/email/messages")).json()["messages"]
        assert [m["kind"] for m in history] == ["digest", "digest"]
        assert {m["status"] for m in history} <= {"pending", "sending", "handover", "sent"}
        bad = await daily.client.put(
            "/v1/user/email/frequency", json={"frequency": "hourly"}, headers=daily.write_headers()
        )
        assert bad.status_code == 422 and bad.json()["error"] == "validation_error"
