"""Native API keys: shown once, hashed, scoped, revocable (foundation point 5)."""

from fastapi import FastAPI
from sqlalchemy import select

from papertrade.models import ApiKey
from tests.conftest import User, bearer, client_for


async def test_key_is_shown_once_and_listed_without_it(user: User, app: FastAPI) -> None:
    created = await user.post("/v1/user/api-keys", json={"note": "prod bot", "scope": "read"})
    assert created.status_code == 201
    key = created.json()["key"]
    assert key.startswith("ptk_") and created.json()["prefix"] == key[:12]
    listing = await user.get("/v1/user/api-keys")
    assert listing.status_code == 200
    row = listing.json()[0]
    assert row["note"] == "prod bot" and row["scope"] == "read" and "key" not in row
    assert key not in listing.text
    async with app.state.ctx.db.reader() as session:
        stored = await session.scalar(select(ApiKey).where(ApiKey.id == row["id"]))
    assert stored is not None and key not in stored.key_hash


async def test_last_use_is_recorded(user: User, app: FastAPI) -> None:
    key = await user.api_key("read")
    async with client_for(app) as client:
        assert (await client.get("/v1/user", headers=bearer(key))).status_code == 200
    listing = (await user.get("/v1/user/api-keys")).json()
    assert listing[0]["last_used_at"] is not None


async def test_read_key_reads_but_cannot_write(user: User, app: FastAPI) -> None:
    key = await user.api_key("read")
    async with client_for(app) as client:
        assert (await client.get("/v1/portfolios/my", headers=bearer(key))).status_code == 200
        response = await client.post("/v1/portfolios", json={"name": "x"}, headers=bearer(key))
    assert response.status_code == 403
    assert response.json()["error"] == "read_only_key"
    assert "read-only" in response.json()["msg"]


async def test_key_management_needs_the_session_cookie(user: User, app: FastAPI) -> None:
    key = await user.api_key("write")
    async with client_for(app) as client:
        for response in (
            await client.get("/v1/user/api-keys", headers=bearer(key)),
            await client.post("/v1/user/api-keys", json={"scope": "write"}, headers=bearer(key)),
        ):
            assert response.status_code == 403
            assert response.json()["error"] == "session_required"


async def test_revoked_key_fails_on_the_next_request(user: User, app: FastAPI) -> None:
    key = await user.api_key("write")
    key_id = (await user.get("/v1/user/api-keys")).json()[0]["id"]
    async with client_for(app) as client:
        assert (await client.get("/v1/user", headers=bearer(key))).status_code == 200
        revoked = await user.delete(f"/v1/user/api-keys/{key_id}")
        assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
        after = await client.get("/v1/user", headers=bearer(key))
    assert after.status_code == 401
    assert after.json()["error"] == "invalid_api_key"


async def test_another_users_key_cannot_be_revoked(user_factory: object, user: User) -> None:
    other: User = await user_factory()  # type: ignore[operator]
    await other.api_key()
    other_id = (await other.get("/v1/user/api-keys")).json()[0]["id"]
    response = await user.delete(f"/v1/user/api-keys/{other_id}")
    assert response.status_code == 404
    assert (await other.get("/v1/user/api-keys")).json()[0]["revoked_at"] is None


async def test_malformed_authorization_headers(app: FastAPI) -> None:
    async with client_for(app) as client:
        for value in ["Basic abc", "Bearer", "Bearer    ", "ptk_nothing"]:
            response = await client.get("/v1/user", headers={"Authorization": value})
            assert response.status_code == 401, value
            assert set(response.json()) == {"error", "msg"}
