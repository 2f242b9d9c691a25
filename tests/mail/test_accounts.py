"""Email verification and password reset, mailed through a local SMTP sink by aiosmtplib."""

import re
from urllib.parse import urlsplit

from papertrade.config import Settings
from tests.conftest import client_for, sign_up
from tests.mail.helpers import link_in, mail_app, text_of


async def test_an_address_is_verified_by_the_mailed_link_once(isolated_settings: Settings) -> None:
    async with mail_app(isolated_settings) as (app, sink):
        user = await sign_up(app)
        before = (await user.get("/v1/user/email")).json()
        assert before == {
            "email": user.email,
            "verified": False,
            "suppressed": False,
            "suppressed_reason": None,
            "frequency": "instant",
        }
        sent = await user.post("/v1/user/email/verification")
        assert sent.status_code == 202 and sent.json() == {"sent": True, "email": user.email}
        (mail,) = await sink.wait_for(user.email)
        assert mail["Subject"] == "Confirm your email address"
        assert mail["From"] == "Papertrade <no-reply@papertrade.test>"
        assert "List-Unsubscribe" not in mail  # account mail: no unsubscribe
        link = urlsplit(link_in(mail, "/email/verify"))
        again = await user.post("/v1/user/email/verification")
        assert again.json()["sent"] is False  # one a minute

        async with client_for(app) as browser:  # the link works without signing in
            opened = await browser.get(f"/v1/auth/email/verify?{link.query}")
            assert opened.status_code == 200 and opened.json()["verified"] is True
            reused = await browser.get(f"/v1/auth/email/verify?{link.query}")
            assert reused.status_code == 400 and reused.json()["error"] == "invalid_token"
        assert (await user.get("/v1/user/email")).json()["verified"] is True


async def test_a_password_is_reset_with_the_mailed_token(isolated_settings: Settings) -> None:
    async with mail_app(isolated_settings) as (app, sink):
        user = await sign_up(app)
        async with client_for(app) as anonymous:
            known = await anonymous.post(
                "/v1/auth/password/forgot", json={"email": user.email.upper()}
            )
            unknown = await anonymous.post(
                "/v1/auth/password/forgot", json={"email": "nobody-here@example.com"}
            )
            assert known.status_code == unknown.status_code == 202
            assert known.json() == unknown.json()  # nothing tells the two apart
            (mail,) = await sink.wait_for(user.email)
            assert mail["Subject"] == "Reset your password"
            found = re.search(r"^([A-Za-z0-9_-]{43})\r?$", text_of(mail), re.MULTILINE)
            assert found is not None, text_of(mail)
            token = found.group(1)
            weak = await anonymous.post(
                "/v1/auth/password/reset", json={"token": token, "password": "password1"}
            )
            assert weak.status_code == 422 and weak.json()["error"] == "validation_error"
            done = await anonymous.post(
                "/v1/auth/password/reset",
                json={"token": token, "password": "violet-harbor-kettle-42"},
            )
            assert done.status_code == 200, done.text
            reused = await anonymous.post(
                "/v1/auth/password/reset",
                json={"token": token, "password": "another-long-phrase-9"},
            )
            assert reused.status_code == 400 and reused.json()["error"] == "invalid_token"
            signed_out = await user.get("/v1/user")
            assert signed_out.status_code == 401  # every session was signed out
            old = await anonymous.post(
                "/v1/auth/login", json={"email": user.email, "password": user.password}
            )
            assert old.status_code == 401
            new = await anonymous.post(
                "/v1/auth/login", json={"email": user.email, "password": "violet-harbor-kettle-42"}
            )
            assert new.status_code == 200
        assert sink.to("nobody-here@example.com") == []


async def test_bad_tokens_are_refused(isolated_settings: Settings) -> None:
    async with mail_app(isolated_settings) as (app, _sink), client_for(app) as anonymous:
        for path, body in (
            ("/v1/auth/email/verify", {"token": "nope"}),
            (
                "/v1/auth/password/reset",
                {"token": "nope", "password": "violet-harbor-kettle-42"},
            ),
        ):
            response = await anonymous.post(path, json=body)
            assert response.status_code == 400 and response.json()["error"] == "invalid_token"
        for query in ("1.fill.0000", "abc", "999999.all.deadbeef"):
            response = await anonymous.get("/v1/email/unsubscribe", params={"token": query})
            assert response.status_code == 400 and response.json()["error"] == "invalid_token"
