"""Security notices: an API key created or revoked, and a sign-in from a device the account never
signed in from, reach the owner's inbox; the inbox cannot be turned off for them."""

import re
from typing import Any

import httpx
from fastapi import FastAPI

from tests.conftest import ORIGIN, User
from tests.notifications.helpers import inbox, wait_for_inbox

FIREFOX = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0"
FIREFOX_UPDATED = FIREFOX.replace("133.0", "134.0")
WHEN = re.compile(r"on \d{4}-\d\d-\d\d \d\d:\d\d UTC\.")


async def sign_in(app: FastAPI, user: User, user_agent: str, address: str = "127.0.0.1") -> None:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    async with httpx.AsyncClient(
        transport=transport, base_url=ORIGIN, headers={"User-Agent": user_agent}
    ) as client:
        response = await client.post(
            "/v1/auth/login",
            json={"email": user.email, "password": user.password},
            headers={"Origin": ORIGIN},
        )
        assert response.status_code == 200, response.text


async def test_creating_and_revoking_an_api_key_tells_its_owner(user_factory: Any) -> None:
    user: User = await user_factory()
    other: User = await user_factory()
    created = await user.post("/v1/user/api-keys", json={"note": "my bot", "scope": "read"})
    assert created.status_code == 201, created.text
    key = created.json()
    (told,) = await wait_for_inbox(user, 1, kind="security")
    assert told["title"] == "API key created"
    assert told["body"].startswith(f"API key {key['prefix']}… (my bot) with read scope was created")
    assert WHEN.search(told["body"]), told["body"]
    assert told["data"] == {"key_id": key["id"], "prefix": key["prefix"], "scope": "read"}
    assert key["key"] not in str(told)  # the secret itself is never repeated

    revoked = await user.delete(f"/v1/user/api-keys/{key['id']}")
    assert revoked.status_code == 200, revoked.text
    latest, _ = await wait_for_inbox(user, 2, kind="security")
    assert latest["title"] == "API key revoked"
    assert f"API key {key['prefix']}… (my bot) with read scope was revoked" in latest["body"]
    # Revoking it again changes nothing and says nothing.
    assert (await user.delete(f"/v1/user/api-keys/{key['id']}")).status_code == 200
    assert len((await inbox(user, kind="security"))["notifications"]) == 2
    assert (await inbox(other, kind="security"))["notifications"] == []


async def test_a_sign_in_from_a_new_browser_is_told_and_a_known_one_is_not(
    app: FastAPI, user_factory: Any
) -> None:
    user: User = await user_factory()  # signed up with the test client's own User-Agent
    await sign_in(app, user, "python-httpx/0.28.1")  # the same device as the sign-up
    await sign_in(app, user, FIREFOX)
    (told,) = await wait_for_inbox(user, 1, kind="security")
    assert told["title"] == "New sign-in: Firefox on Windows"
    assert told["body"].startswith("Your account was signed in from Firefox on Windows, a device")
    assert WHEN.search(told["body"]), told["body"]
    assert "127.0.0" not in told["body"]  # the address is not repeated, nor kept

    await sign_in(app, user, FIREFOX)  # known now
    await sign_in(app, user, FIREFOX_UPDATED)  # a browser update is the same device
    await user_factory()  # another account's sign-up says nothing to this one
    # Notices arrive in order: once a later one is in, the sign-ins above said all they would.
    await user.api_key()
    told_all = await wait_for_inbox(user, 2, kind="security")
    assert [n["title"] for n in told_all] == ["API key created", "New sign-in: Firefox on Windows"]


async def test_the_same_browser_on_another_network_is_a_new_device(
    app: FastAPI, user_factory: Any
) -> None:
    user: User = await user_factory()  # from 127.0.0.1
    same_agent = f"python-httpx/{httpx.__version__}"
    await sign_in(app, user, same_agent, "127.0.0.77")  # same /24: the same network
    await sign_in(app, user, same_agent, "203.0.113.9")
    await wait_for_inbox(user, 1, kind="security")  # in order: the first would be in by now
    (told,) = (await inbox(user, kind="security"))["notifications"]
    assert told["title"] == "New sign-in: python-httpx"
    assert "203.0.113" not in told["body"]


async def test_signing_up_tells_nothing(user_factory: Any) -> None:
    user: User = await user_factory()
    assert (await inbox(user, kind="security"))["notifications"] == []


async def test_the_inbox_cannot_be_turned_off_for_security_notices(user: User) -> None:
    refused = await user.client.put(
        "/v1/inbox/preferences",
        json={"preferences": {"security": {"inbox": False}}},
        headers=user.write_headers(),
    )
    assert refused.status_code == 422, refused.text
    assert refused.json()["error"] == "channel_required"
    assert "cannot be turned off" in refused.json()["msg"]

    mail_off = await user.client.put(
        "/v1/inbox/preferences",
        json={"preferences": {"security": {"email": False}}},
        headers=user.write_headers(),
    )
    assert mail_off.status_code == 200, mail_off.text
    (security,) = [p for p in mail_off.json()["preferences"] if p["kind"] == "security"]
    assert (security["inbox"], security["email"], security["always"]) == (True, False, ["inbox"])
    await user.api_key()
    (told,) = await wait_for_inbox(user, 1, kind="security")
    assert told["title"] == "API key created"
