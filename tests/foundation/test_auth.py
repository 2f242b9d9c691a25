"""Sign-up, sign-in, sessions and CSRF (foundation points 4 and 7)."""

from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import update

from papertrade.models import UserSession
from tests.conftest import ORIGIN, User, client_for, sign_up, unique_email


def _cookie_attrs(response: httpx.Response, name: str) -> str:
    for header in response.headers.get_list("set-cookie"):
        if header.startswith(f"{name}="):
            return header.lower()
    raise AssertionError(f"no {name} cookie set")


async def test_signup_signs_in_with_a_30_day_httponly_secure_lax_cookie(
    anon: httpx.AsyncClient,
) -> None:
    email = unique_email()
    response = await anon.post(
        "/v1/auth/signup",
        json={"email": email, "password": "long-enough"},
        headers={"Origin": ORIGIN},
    )
    assert response.status_code == 201
    assert response.json()["email"] == email
    session = _cookie_attrs(response, "pt_session")
    for attribute in ("httponly", "secure", "samesite=lax", "max-age=2592000", "path=/"):
        assert attribute in session
    csrf = _cookie_attrs(response, "csrf_token")
    assert "httponly" not in csrf and "secure" in csrf
    profile = await anon.get("/v1/user")
    assert profile.status_code == 200 and profile.json()["email"] == email


async def test_cookie_domain_comes_from_settings(settings: Any) -> None:
    from tests.conftest import running_app

    configured = settings.model_copy(update={"cookie_domain": "papertrade.example"})
    async with running_app(configured) as app, client_for(app) as client:
        response = await client.post(
            "/v1/auth/signup",
            json={"email": unique_email(), "password": "long-enough"},
            headers={"Origin": ORIGIN},
        )
    assert "domain=papertrade.example" in _cookie_attrs(response, "pt_session")


async def test_duplicate_signup_is_refused_even_with_other_case(app: FastAPI) -> None:
    email = unique_email()
    await sign_up(app, email=email)
    async with client_for(app) as client:
        again = await client.post(
            "/v1/auth/signup",
            json={"email": email.replace("example.com", "EXAMPLE.com"), "password": "whatever-1-2"},
        )
    assert again.status_code == 409
    assert again.json() == {
        "error": "email_taken",
        "msg": "An account with this email already exists.",
    }


async def test_unicode_email_signs_up_and_logs_in(app: FastAPI) -> None:
    user = await sign_up(app, email=f"trädér-{unique_email()}")
    async with client_for(app) as client:
        response = await client.post(
            "/v1/auth/login", json={"email": user.email, "password": user.password}
        )
    assert response.status_code == 200
    assert response.json()["email"] == user.email


async def test_wrong_password_and_unknown_email_get_the_same_answer(
    user: User, anon: httpx.AsyncClient
) -> None:
    wrong = await anon.post(
        "/v1/auth/login", json={"email": user.email, "password": "not-the-password"}
    )
    unknown = await anon.post(
        "/v1/auth/login", json={"email": unique_email(), "password": "not-the-password"}
    )
    assert wrong.status_code == unknown.status_code == 401
    assert (
        wrong.json()
        == unknown.json()
        == {
            "error": "invalid_credentials",
            "msg": "Email or password is incorrect.",
        }
    )


async def test_sql_like_and_malformed_emails_are_validation_errors(anon: httpx.AsyncClient) -> None:
    for email in [
        "' OR 1=1 --",
        "a@b",
        "x" * 400 + "@example.com",
        "robert'); DROP TABLE users;--@x.io",
    ]:
        response = await anon.post(
            "/v1/auth/signup", json={"email": email, "password": "long-enough"}
        )
        assert response.status_code == 422, email
        assert response.json()["error"] == "validation_error"
        assert set(response.json()) == {"error", "msg"}


async def test_logout_revokes_the_session_on_the_next_request(user: User) -> None:
    stolen = dict(user.client.cookies)
    response = await user.post("/v1/auth/logout")
    assert response.status_code == 200
    async with client_for_cookies(user, stolen) as replay:
        after = await replay.get("/v1/user")
    assert after.status_code == 401
    assert after.json()["error"] == "unauthenticated"


def client_for_cookies(user: User, cookies: dict[str, str]) -> httpx.AsyncClient:
    transport = user.client._transport
    return httpx.AsyncClient(transport=transport, base_url=ORIGIN, cookies=cookies)


async def test_expired_session_is_refused(user: User, app: FastAPI) -> None:
    async with app.state.ctx.db.unit_of_work() as session:
        await session.execute(
            update(UserSession).where(UserSession.user_id == user.id).values(expires_at=1)
        )
    response = await user.get("/v1/user")
    assert response.status_code == 401


async def test_missing_and_forged_cookies_are_refused(anon: httpx.AsyncClient) -> None:
    assert (await anon.get("/v1/user")).status_code == 401
    anon.cookies.set("pt_session", "pts_forged")
    response = await anon.get("/v1/user")
    assert response.status_code == 401
    assert response.json()["error"] == "unauthenticated"


async def test_cookie_write_needs_matching_csrf_header(user: User) -> None:
    body = {"name": "csrf"}
    no_header = await user.client.post("/v1/portfolios", json=body, headers={"Origin": ORIGIN})
    tampered = await user.client.post(
        "/v1/portfolios", json=body, headers={"Origin": ORIGIN, "X-CSRF-Token": "tampered"}
    )
    for response in (no_header, tampered):
        assert response.status_code == 403
        assert response.json()["error"] == "csrf_failed"
    ok = await user.post("/v1/portfolios", json=body)
    assert ok.status_code == 201


async def test_cookie_write_needs_an_allowed_origin(user: User) -> None:
    token = user.client.cookies.get("csrf_token") or ""
    foreign = await user.client.post(
        "/v1/portfolios",
        json={"name": "x"},
        headers={"X-CSRF-Token": token, "Origin": "https://evil.example"},
    )
    missing = await user.client.post(
        "/v1/portfolios", json={"name": "x"}, headers={"X-CSRF-Token": token}
    )
    via_referer = await user.client.post(
        "/v1/portfolios",
        json={"name": "x"},
        headers={"X-CSRF-Token": token, "Referer": f"{ORIGIN}/app"},
    )
    assert foreign.status_code == 403 and missing.status_code == 403
    assert via_referer.status_code == 201


async def test_api_key_writes_skip_csrf(user: User, app: FastAPI) -> None:
    key = await user.api_key("write")
    async with client_for(app) as client:
        response = await client.post(
            "/v1/portfolios", json={"name": "bot"}, headers={"Authorization": f"Bearer {key}"}
        )
    assert response.status_code == 201
