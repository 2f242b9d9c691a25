"""One account per email address, whatever its capitals: sign-up and sign-in normalise it, the
database refuses a second casing, and migration 0005 settles the duplicates made before
(issue 14 item 7)."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from alembic import command
from alembic.script import ScriptDirectory
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from papertrade import migrate
from papertrade.config import Settings
from papertrade.kit.security import hash_password
from papertrade.migrate import alembic_config
from tests.conftest import client_for, running_app, sign_up, unique_email

PASSWORD = "s3cret-pass"
MIGRATION = "0005"


async def _login(client: httpx.AsyncClient, email: str) -> httpx.Response:
    return await client.post("/v1/auth/login", json={"email": email, "password": PASSWORD})


async def test_an_address_in_other_capitals_is_the_same_account(app: FastAPI) -> None:
    email = unique_email("case")
    first = await sign_up(app, email=email)
    async with client_for(app) as client:
        again = await client.post(
            "/v1/auth/signup", json={"email": email.upper(), "password": "another-long-pass"}
        )
        assert again.status_code == 409
        assert again.json() == {
            "error": "email_taken",
            "msg": "An account with this email already exists.",
        }
        for typed in (email.upper(), f"  {email.capitalize()} ", email):
            signed_in = await _login(client, typed)
            assert signed_in.status_code == 200, typed
            assert signed_in.json()["id"] == first.id
    await first.client.aclose()


async def test_the_address_is_kept_in_lower_case(app: FastAPI) -> None:
    typed = "Ärger.MiXeD-" + unique_email("x").upper()
    user = await sign_up(app, email=typed)
    assert user.profile["email"] == typed.lower()
    async with client_for(app) as client:
        assert (await _login(client, typed.lower())).json()["id"] == user.id
        taken = await client.post(
            "/v1/auth/signup", json={"email": typed.lower(), "password": "another-long-pass"}
        )
    assert taken.status_code == 409
    await user.client.aclose()


@asynccontextmanager
async def _engine(url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_async_engine(url)
    try:
        yield engine
    finally:
        await engine.dispose()


async def _migrate(engine: AsyncEngine, revision: str) -> None:
    def run(connection: object) -> None:
        config = alembic_config(str(engine.url))
        config.attributes["connection"] = connection
        command.upgrade(config, revision)

    async with engine.begin() as connection:
        await connection.run_sync(run)


async def _insert_user(engine: AsyncEngine, email: str, created_at: int) -> int:
    async with engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO users (email, password_hash, display_name, tier, created_at, "
                "updated_at) VALUES (:email, :hash, :email, 'free', :at, :at)"
            ),
            {"email": email, "hash": hash_password(PASSWORD), "at": created_at},
        )
        found = await connection.scalar(
            text("SELECT id FROM users WHERE email = :email"), {"email": email}
        )
    assert found is not None
    return int(found)


async def test_the_migration_keeps_the_oldest_account_and_renames_later_duplicates(
    isolated_settings: Settings,
) -> None:
    previous = ScriptDirectory.from_config(alembic_config("")).get_revision(MIGRATION)
    assert previous is not None and isinstance(previous.down_revision, str)
    async with _engine(isolated_settings.database_url) as engine:
        await _migrate(engine, previous.down_revision)
        oldest = await _insert_user(engine, "D@EXAMPLE.COM", 1_700_000_000_000)
        later = await _insert_user(engine, "d@example.com", 1_700_000_100_000)
        solo = await _insert_user(engine, "Solo@Example.COM", 1_700_000_200_000)
        await migrate.upgrade(engine)  # as the service does at start, from a release before
        async with engine.connect() as connection:
            rows: dict[int, str] = dict(
                (await connection.execute(text("SELECT id, email FROM users ORDER BY id"))).all()
            )
        assert rows == {
            oldest: "d@example.com",
            later: f"d@example.com#duplicate-{later}",
            solo: "solo@example.com",
        }
        with pytest.raises(IntegrityError):
            await _insert_user(engine, "SOLO@example.com", 1_700_000_300_000)

    # Both owners still sign in: the oldest with the address in any case, the later one with
    # the name it was given.
    async with running_app(isolated_settings) as app, client_for(app) as client:
        assert (await _login(client, "D@Example.com")).json()["id"] == oldest
        assert (await _login(client, f"d@example.com#duplicate-{later}")).json()["id"] == later
        assert (await _login(client, "SOLO@EXAMPLE.COM")).json()["id"] == solo
