"""Changing the account's address: a link to the new address, the change only when it is
opened, a notice to the old address, sessions kept; mailed through a local SMTP sink."""

from urllib.parse import urlsplit

from sqlalchemy import func, select, update

from papertrade.config import Settings
from papertrade.models import AccountToken, EmailMessage
from tests.conftest import bearer, client_for, sign_up, unique_email
from tests.foundation.helpers import hold_the_window
from tests.mail.helpers import link_in, mail_app, text_of

LINK = "/email/verify"  # the web page; it posts the token to /v1/auth/email/verify


async def test_the_address_changes_only_when_the_link_to_the_new_one_is_opened(
    isolated_settings: Settings,
) -> None:
    async with mail_app(isolated_settings) as (app, sink):
        user = await sign_up(app)
        new = unique_email("moved")
        asked = await user.post(
            "/v1/user/email", json={"new_email": new.upper(), "current_password": user.password}
        )
        assert asked.status_code == 202 and asked.json() == {"sent": True, "email": new}
        (mail,) = await sink.wait_for(new)
        assert mail["Subject"] == "Confirm your new email address"
        assert "List-Unsubscribe" not in mail
        assert (await user.get("/v1/user/email")).json()["email"] == user.email  # not yet
        link = urlsplit(link_in(mail, LINK))

        async with client_for(app) as browser:  # the link works without signing in
            opened = await browser.get(f"/v1/auth/email/verify?{link.query}")
            assert opened.status_code == 200, opened.text
            assert opened.json() == {
                "email": new,
                "verified": True,
                "suppressed": False,
                "suppressed_reason": None,
                "frequency": "instant",
            }
            reused = await browser.get(f"/v1/auth/email/verify?{link.query}")
            assert reused.status_code == 400 and reused.json()["error"] == "invalid_token"

            (notice,) = await sink.wait_for(user.email)  # the old address is told
            assert notice["Subject"] == "Your Papertrade email address was changed"
            assert new in text_of(notice)
            assert (await user.get("/v1/user")).status_code == 200  # the session stays
            assert (await user.get("/v1/user/email")).json()["email"] == new
            old_login = await browser.post(
                "/v1/auth/login", json={"email": user.email, "password": user.password}
            )
            assert old_login.status_code == 401
            new_login = await browser.post(
                "/v1/auth/login", json={"email": new, "password": user.password}
            )
            assert new_login.status_code == 200


async def test_a_new_request_voids_the_earlier_link(isolated_settings: Settings) -> None:
    async with mail_app(isolated_settings) as (app, sink):
        user = await sign_up(app)
        first, second = unique_email("first"), unique_email("second")
        body = {"new_email": first, "current_password": user.password}
        assert (await user.post("/v1/user/email", json=body)).json()["sent"] is True
        again = await user.post("/v1/user/email", json={**body, "new_email": second})
        assert again.status_code == 202 and again.json()["sent"] is False  # one a minute
        (early,) = await sink.wait_for(first)
        # a minute later the user asks for the second address: the first link dies
        async with app.state.ctx.transaction() as uow:
            await uow.session.execute(
                update(AccountToken).values(created_at=AccountToken.created_at - 61_000)
            )
        assert (await user.post("/v1/user/email", json={**body, "new_email": second})).json()[
            "sent"
        ] is True
        (late,) = await sink.wait_for(second)
        async with client_for(app) as browser:
            stale = urlsplit(link_in(early, LINK))
            refused = await browser.get(f"/v1/auth/email/verify?{stale.query}")
            assert refused.status_code == 400 and refused.json()["error"] == "invalid_token"
            fresh = urlsplit(link_in(late, LINK))
            assert (await browser.get(f"/v1/auth/email/verify?{fresh.query}")).json()[
                "email"
            ] == second


async def test_a_taken_address_is_refused_when_asked_and_when_the_link_is_opened(
    isolated_settings: Settings,
) -> None:
    async with mail_app(isolated_settings) as (app, sink):
        user, other = await sign_up(app), await sign_up(app)
        taken = await user.post(
            "/v1/user/email",
            json={"new_email": other.email.upper(), "current_password": user.password},
        )
        assert taken.status_code == 409 and taken.json()["error"] == "email_taken"
        wanted = unique_email("contested")
        asked = await user.post(
            "/v1/user/email", json={"new_email": wanted, "current_password": user.password}
        )
        assert asked.status_code == 202
        (mail,) = await sink.wait_for(wanted)
        async with client_for(app) as browser:  # someone signs up with it before the link
            created = await sign_up(app, email=wanted)
            link = urlsplit(link_in(mail, LINK))
            late = await browser.get(f"/v1/auth/email/verify?{link.query}")
            assert late.status_code == 409 and late.json()["error"] == "email_taken"
            await created.client.aclose()
        assert (await user.get("/v1/user/email")).json()["email"] == user.email


async def test_bad_requests_get_the_documented_errors(isolated_settings: Settings) -> None:
    async with mail_app(isolated_settings) as (app, _sink):
        user = await sign_up(app)
        wrong = await user.post(
            "/v1/user/email",
            json={"new_email": unique_email(), "current_password": "not-the-password"},
        )
        assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_credentials"
        same = await user.post(
            "/v1/user/email",
            json={"new_email": user.email.upper(), "current_password": user.password},
        )
        assert same.status_code == 400 and same.json()["error"] == "email_unchanged"
        for body in (
            {},
            {"new_email": "not-an-address", "current_password": user.password},
            {"new_email": unique_email(), "current_password": user.password, "extra": 1},
        ):
            refused = await user.post("/v1/user/email", json=body)
            assert refused.status_code == 422 and set(refused.json()) == {"error", "msg"}
        api_key = await user.api_key()
        async with client_for(app) as bot:  # a key cannot move the account
            by_key = await bot.post(
                "/v1/user/email",
                json={"new_email": unique_email(), "current_password": user.password},
                headers=bearer(api_key),
            )
            assert by_key.status_code == 403 and by_key.json()["error"] == "session_required"
        # No account mail (a confirmation link) went anywhere; the new key's security
        # notification may be mailed, once the outbox delivers it (kind "api_key.created").
        account_mail = select(func.count()).select_from(EmailMessage).where(EmailMessage.kind == "")
        async with app.state.ctx.db.reader() as session:
            assert await session.scalar(account_mail) == 0


async def test_wrong_passwords_count_against_the_sign_in_budget(
    isolated_settings: Settings,
) -> None:
    settings = isolated_settings.model_copy(update={"rate_limit_login_account_ip_per_15min": 2})
    async with mail_app(settings) as (app, _sink):
        user = await sign_up(app)
        body = {"new_email": unique_email(), "current_password": user.password}
        right = await user.post("/v1/user/email", json=body)
        assert right.status_code == 202  # a right password is not charged
        hold_the_window()  # the three guesses count in one window of 15 minutes
        guesses = [
            await user.post("/v1/user/email", json={**body, "current_password": f"guess-{n}"})
            for n in range(3)
        ]
        assert [g.status_code for g in guesses] == [401, 401, 429]
        assert guesses[-1].json()["error"] == "rate_limited"
