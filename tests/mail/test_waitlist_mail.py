"""The waitlist's e-mails: the double opt-in link and the invitation code, queued by the outbox
consumer and sent through a local SMTP sink."""

import asyncio
from urllib.parse import parse_qs, urlsplit

from sqlalchemy import select

from papertrade.config import Settings
from papertrade.launch import service
from papertrade.models import EmailMessage, EmailSuppression
from tests.conftest import ORIGIN, client_for, unique_email
from tests.mail.helpers import link_in, mail_app, text_of


async def test_a_waitlister_confirms_by_the_mailed_link_and_signs_up_with_the_mailed_code(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings.model_copy(update={"registration_mode": "waitlist"})
    email = unique_email("waiter")
    async with mail_app(settings) as (app, sink), client_for(app) as anon:
        joined = await anon.post("/v1/launch/waitlist", json={"email": email.upper()})
        assert joined.status_code == 202, joined.text
        (confirm,) = await sink.wait_for(email)  # the address as kept: lower case
        assert confirm["Subject"] == "Confirm your place on the Papertrade waitlist"
        assert "List-Unsubscribe" not in confirm  # transactional: no unsubscribe
        link = urlsplit(link_in(confirm, "/waitlist/verify"))
        assert link.path == "/waitlist/verify"  # the web page, which confirms with a POST
        landing = await anon.get(f"{link.path}?{link.query}")
        assert landing.status_code == 200 and "Confirming your place" in landing.text
        (token,) = parse_qs(link.query)["token"]
        opened = await anon.post("/v1/launch/waitlist/verify", json={"token": token})
        assert opened.status_code == 200, opened.text
        standing = opened.json()
        assert standing["verified"] is True and standing["position"] == 1

        async with app.state.ctx.transaction() as uow:
            ((invited_email, code),) = await service.invite_top(uow, 10)
        assert invited_email == email
        (_, invitation) = await sink.wait_for(email, count=2)
        assert invitation["Subject"] == "Your Papertrade invitation"
        assert code in text_of(invitation)
        signup = urlsplit(link_in(invitation, "/signup"))
        assert parse_qs(signup.query) == {"code": [code]}
        page = await anon.get(f"{signup.path}?{signup.query}")
        assert page.status_code == 200 and code in page.text  # the form comes prefilled
        created = await anon.post(
            "/v1/auth/signup",
            json={"email": email, "password": "violet-harbor-kettle-42", "invite_code": code},
            headers={"Origin": ORIGIN},
        )
        assert created.status_code == 201, created.text


async def test_asking_again_mails_a_new_link_and_only_it_works(
    isolated_settings: Settings,
) -> None:
    email = unique_email("again")
    async with mail_app(isolated_settings) as (app, sink), client_for(app) as anon:
        await anon.post("/v1/launch/waitlist", json={"email": email})
        (first,) = await sink.wait_for(email)
        await anon.post("/v1/launch/waitlist", json={"email": email})
        (_, second) = await sink.wait_for(email, count=2)
        old = urlsplit(link_in(first, "/waitlist/verify"))
        new = urlsplit(link_in(second, "/waitlist/verify"))
        stale = await anon.get(f"/v1/launch/waitlist/verify?{old.query}")
        assert stale.status_code == 404 and stale.json()["error"] == "waitlist_not_found"
        fresh = await anon.get(f"/v1/launch/waitlist/verify?{new.query}")
        assert fresh.json()["verified"] is True


async def test_waitlist_mail_is_transactional_and_reaches_a_suppressed_address(
    isolated_settings: Settings,
) -> None:
    email = unique_email("suppressed")
    async with mail_app(isolated_settings) as (app, sink), client_for(app) as anon:
        async with app.state.ctx.transaction() as uow:
            uow.session.add(EmailSuppression(address=email, reason="unsubscribed"))
        await anon.post("/v1/launch/waitlist", json={"email": email})
        (mail,) = await sink.wait_for(email)  # the person just asked for it
        assert "/waitlist/verify?token=wl_" in text_of(mail)
        # The SMTP sink has the mail a moment before the sender marks its row sent: wait for it.
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            async with app.state.ctx.db.reader() as session:
                rows = list(
                    await session.scalars(
                        select(EmailMessage).where(EmailMessage.to_address == email)
                    )
                )
            seen = [(row.transactional, row.status) for row in rows]
            on_the_way = seen in ([(True, "sending")], [(True, "handover")])
            if not on_the_way or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.05)
        assert seen == [(True, "sent")]


async def test_a_bad_link_token_is_refused_in_the_documented_shape(
    isolated_settings: Settings,
) -> None:
    async with mail_app(isolated_settings) as (app, _sink), client_for(app) as anon:
        wrong = await anon.get("/v1/launch/waitlist/verify", params={"token": "wl_nothing"})
        assert wrong.status_code == 404 and wrong.json()["error"] == "waitlist_not_found"
        empty = await anon.get("/v1/launch/waitlist/verify", params={"token": ""})
        assert empty.status_code == 422 and set(empty.json()) == {"error", "msg"}
