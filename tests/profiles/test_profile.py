"""Profile fields, avatar upload (validated, re-encoded) or initials, public profile, password
change (other sessions signed out), account deletion."""

import io
from typing import Any

from fastapi import FastAPI
from PIL import Image

from tests.conftest import ORIGIN, User, bearer, client_for, sign_up


def _image(fmt: str = "PNG", size: tuple[int, int] = (40, 20)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(out, format=fmt)
    return out.getvalue()


async def test_profile_defaults_and_changes(user: User) -> None:
    mine = (await user.get("/v1/user/profile")).json()
    assert (mine["bio"], mine["time_zone"], mine["locale"], mine["has_avatar"]) == (
        "",
        "UTC",
        "en",
        False,
    )
    changed = await user.patch(
        "/v1/user/profile",
        json={
            "display_name": "Ada Lovelace",
            "bio": "swing",
            "time_zone": "Europe/Berlin",
            "locale": "pt-BR",
        },
    )
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["display_name"], body["initials"], body["time_zone"]) == (
        "Ada Lovelace",
        "AL",
        "Europe/Berlin",
    )
    assert (await user.get("/v1/user")).json()["display_name"] == "Ada Lovelace"


async def test_bad_profile_values_are_422(user: User) -> None:
    for body in [
        {"time_zone": "Mars/Olympus"},
        {"locale": "english"},
        {"display_name": "   "},
        {"display_name": "me@example.com"},
        {"bio": "x" * 501},
        {"nickname": "x"},
    ]:
        response = await user.patch("/v1/user/profile", json=body)
        assert response.status_code == 422, body
        assert response.json()["error"] == "validation_error"


async def test_an_avatar_is_re_encoded_and_served(user: User, anon: Any) -> None:
    uploaded = await user.client.put(
        "/v1/user/avatar",
        content=_image("JPEG", (600, 300)),
        headers={**user.write_headers(), "Content-Type": "image/jpeg"},
    )
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["has_avatar"] is True
    served = await anon.get(f"/v1/users/{user.id}/avatar")
    assert served.headers["content-type"] == "image/png"
    with Image.open(io.BytesIO(served.content)) as image:
        assert image.size == (256, 256)
    removed = await user.delete("/v1/user/avatar")
    assert removed.json()["has_avatar"] is False
    initials = await anon.get(f"/v1/users/{user.id}/avatar")
    assert initials.headers["content-type"].startswith("image/svg+xml")
    assert "<svg" in initials.text


async def test_what_is_not_an_image_is_refused(user: User) -> None:
    for content, media_type in [
        (b"not an image", "image/png"),
        (_image()[:60], "image/png"),  # cut short
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "image/svg+xml"),
        (_image(), "text/plain"),
        (_image("BMP"), "image/png"),  # a format we do not take
    ]:
        response = await user.client.put(
            "/v1/user/avatar",
            content=content,
            headers={**user.write_headers(), "Content-Type": media_type},
        )
        assert response.status_code == 422, (media_type, response.text)
        assert response.json()["error"] == "invalid_image"
    huge = await user.client.put(
        "/v1/user/avatar",
        content=_image("PNG", (5000, 10)),
        headers={**user.write_headers(), "Content-Type": "image/png"},
    )
    assert huge.status_code == 422 and "4096" in huge.json()["msg"]
    too_big = await user.client.put(
        "/v1/user/avatar",
        content=b"\x89PNG" + b"\x00" * (2 * 1024 * 1024 + 1),  # past the upload limit
        headers={**user.write_headers(), "Content-Type": "image/png"},
    )
    assert too_big.status_code == 413


async def test_the_public_profile_shows_public_portfolios_and_never_the_email(
    user: User, anon: Any
) -> None:
    await user.portfolio(name="secret plans")
    shown = await user.portfolio(name="open book", visibility="public")
    public = (await anon.get(f"/v1/users/{user.id}/profile")).json()
    assert public["portfolios"] == [{"code": shown["code"], "name": "open book"}]
    assert public["display_name"] == f"trader{user.id}"  # the default name is the e-mail
    assert user.email not in str(public) and "secret plans" not in str(public)
    missing = await anon.get("/v1/users/2147483647/profile")
    assert missing.status_code == 404 and missing.json()["error"] == "user_not_found"


async def test_changing_the_password_signs_out_the_other_sessions(user: User, app: FastAPI) -> None:
    async with client_for(app) as other:
        login = await other.post(
            "/v1/auth/login",
            json={"email": user.email, "password": user.password},
            headers={"Origin": ORIGIN},
        )
        assert login.status_code == 200
        wrong = await user.post(
            "/v1/user/password",
            json={"current_password": "not-it-at-all", "new_password": "a brand new phrase"},
        )
        assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_credentials"
        changed = await user.post(
            "/v1/user/password",
            json={"current_password": user.password, "new_password": "a brand new phrase"},
        )
        assert changed.json() == {"ok": True, "other_sessions_signed_out": 1}
        assert (await other.get("/v1/user")).status_code == 401
        assert (await user.get("/v1/user")).status_code == 200  # this session stays
        weak = await user.post(
            "/v1/user/password",
            json={"current_password": "a brand new phrase", "new_password": "password123"},
        )
        assert weak.status_code == 422
        relogin = await other.post(
            "/v1/auth/login",
            json={"email": user.email, "password": "a brand new phrase"},
            headers={"Origin": ORIGIN},
        )
        assert relogin.status_code == 200


async def test_deleting_the_account(app: FastAPI, anon: Any) -> None:
    user = await sign_up(app)
    public = await user.portfolio(name="shown", visibility="public")
    key = await user.api_key()
    refused = await user.post("/v1/user/delete", json={"password": "wrong-password"})
    assert refused.status_code == 401
    deleted = await user.post("/v1/user/delete", json={"password": user.password})
    assert deleted.json() == {"ok": True}
    assert (await user.get("/v1/user")).status_code == 401
    async with client_for(app) as client:
        assert (await client.get("/v1/user", headers=bearer(key))).status_code == 401
    assert (await anon.get(f"/v1/portfolios/{public['code']}/public")).status_code == 404
    assert (await anon.get(f"/v1/users/{user.id}/profile")).status_code == 404
    again = await sign_up(app, email=user.email)  # the address is free again
    assert again.id != user.id
    await user.client.aclose()
    await again.client.aclose()
