"""Shared fixtures: a real database (SQLite by default, PostgreSQL when asked) and the real app."""

import asyncio
import os
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI

from papertrade.app import create_app
from papertrade.config import Settings
from papertrade.kit import ratelimit

pytest_plugins = ["tests.hangwatch", "tests.databases", "tests.longfirst"]

ORIGIN = "https://testserver"
PG_URL = os.environ.get("PAPERTRADE_TEST_POSTGRES_URL")  # postgresql+asyncpg://user@host:port/db


async def _fresh_postgres_database(name: str) -> str:
    assert PG_URL is not None
    from tests.databases import check_declared

    check_declared("a PostgreSQL database")
    base = PG_URL.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(base)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return PG_URL.rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture(autouse=True)
def limiter_clock_released() -> Iterator[None]:
    """A test may hold the rate limiter's clock (tests/foundation/helpers.hold_the_window)."""
    yield
    ratelimit.clock = time.time


@pytest.fixture(scope="session")
def worker_id_name(request: pytest.FixtureRequest) -> str:
    return os.environ.get("PYTEST_XDIST_WORKER", "main")


async def _drop_postgres_database(name: str) -> None:
    assert PG_URL is not None
    conn = await asyncpg.connect(PG_URL.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


@pytest.fixture(scope="session")
async def database_url(
    tmp_path_factory: pytest.TempPathFactory, worker_id_name: str
) -> AsyncIterator[str]:
    if not PG_URL:
        yield f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('db') / 'papertrade.db'}"
        return
    # The process id keeps concurrent runs on one server from dropping each other's databases.
    name = f"papertrade_test_{worker_id_name}_{os.getpid()}"
    yield await _fresh_postgres_database(name)
    await _drop_postgres_database(name)


def make_settings(database_url: str, var_dir: Path, **overrides: Any) -> Settings:
    from tests.databases import check_declared  # imported here: the plugin loads after this file

    check_declared("make_settings")
    values: dict[str, Any] = {
        "database_url": database_url,
        "var_dir": var_dir,
        "secret_key": "test-secret-key",
        "public_base_url": ORIGIN,
        "market_source": "sim",
        "sim_tick_ms": 100,
        # The suite signs up hundreds of users from 127.0.0.1; tests of the limit set their own.
        "rate_limit_signup_ip_per_hour": 1_000_000,
        # The suite's users make more portfolios than the free tier allows; tests/wallet turns
        # the tier limits on where it tests them.
        "tiers_enforced": False,
        "rate_limit_waitlist_ip_per_hour": 1_000_000,
        "rate_limit_feedback_per_hour": 1_000_000,
        # Argon2id at its lowest allowed cost: the suite signs up thousands of users, and at
        # the default cost each sign-up is a quarter of a second of CPU.
        "password_hash_time_cost": 1,
        "password_hash_memory_kib": 8192,
    }
    if database_url.startswith("postgresql"):
        # Two workers, each with several apps at once (a service and its "exchange"), share
        # PostgreSQL's 100 connections: each app keeps few.
        values |= {"database_pool_size": 4, "database_max_overflow": 8}
    values.update(overrides)
    return Settings(**values)


@asynccontextmanager
async def running_app(
    settings: Settings, *, migrate: bool = False, **options: Any
) -> AsyncIterator[FastAPI]:
    """The real app with its lifespan (migrations, engine) running; `options` go to create_app.
    An empty database gets the current schema as a copy (tests/databases.py), unless `migrate`:
    then the app migrates it itself, as a new deployment does."""
    from tests.databases import from_template

    if not migrate:
        await from_template(settings.database_url)
    app = create_app(settings, **options)
    async with app.router.lifespan_context(app):
        yield app


@pytest.fixture(scope="session")
async def settings(database_url: str, tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return make_settings(database_url, tmp_path_factory.mktemp("var"))


@pytest.fixture
async def isolated_settings(tmp_path: Path, worker_id_name: str) -> AsyncIterator[Settings]:
    """Settings on a database of its own: for tests that restart the service (and its engine)."""
    if not PG_URL:
        yield make_settings(f"sqlite+aiosqlite:///{tmp_path / 'isolated.db'}", tmp_path)
        return
    name = f"papertrade_iso_{worker_id_name}_{uuid.uuid4().hex[:8]}"
    yield make_settings(await _fresh_postgres_database(name), tmp_path)
    await _drop_postgres_database(name)


@pytest.fixture(scope="session")
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    async with running_app(settings) as application:
        yield application


def client_for(app: FastAPI, **kwargs: Any) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url=ORIGIN, timeout=30, **kwargs
    )


@pytest.fixture
async def anon(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with client_for(app) as client:
        yield client


class User:
    """A signed-up user driving the API through the web session (cookie + CSRF)."""

    def __init__(
        self, client: httpx.AsyncClient, email: str, password: str, profile: dict[str, Any]
    ):
        self.client = client
        self.email = email
        self.password = password
        self.profile = profile

    @property
    def id(self) -> int:
        return int(self.profile["id"])

    def write_headers(self) -> dict[str, str]:
        return {"X-CSRF-Token": self.client.cookies.get("csrf_token") or "", "Origin": ORIGIN}

    async def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return await self.client.get(url, **kwargs)

    async def post(self, url: str, **kwargs: Any) -> httpx.Response:
        headers = {**self.write_headers(), **kwargs.pop("headers", {})}
        return await self.client.post(url, headers=headers, **kwargs)

    async def patch(self, url: str, **kwargs: Any) -> httpx.Response:
        headers = {**self.write_headers(), **kwargs.pop("headers", {})}
        return await self.client.patch(url, headers=headers, **kwargs)

    async def delete(self, url: str, **kwargs: Any) -> httpx.Response:
        headers = {**self.write_headers(), **kwargs.pop("headers", {})}
        return await self.client.delete(url, headers=headers, **kwargs)

    async def portfolio(self, **body: Any) -> dict[str, Any]:
        response = await self.post("/v1/portfolios", json={"name": "main", **body})
        assert response.status_code == 201, response.text
        return dict(response.json())

    async def api_key(self, scope: str = "write") -> str:
        response = await self.post("/v1/user/api-keys", json={"note": "test", "scope": scope})
        assert response.status_code == 201, response.text
        return str(response.json()["key"])

    async def compat_key(self, portfolio_id: int) -> tuple[str, str]:
        response = await self.post(f"/v1/portfolios/{portfolio_id}/api-keys", json={"note": "bot"})
        assert response.status_code == 201, response.text
        return response.json()["api_key"], response.json()["api_secret"]

    async def webhook_token(self, portfolio_id: int) -> str:
        response = await self.post(f"/v1/portfolios/{portfolio_id}/webhook-tokens")
        assert response.status_code == 201, response.text
        return str(response.json()["webhook_token"])


def unique_email(prefix: str = "user") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}@example.com"


async def sign_up(app: FastAPI, email: str | None = None, password: str = "s3cret-pass") -> User:
    client = client_for(app)
    email = email or unique_email()
    response = await client.post(
        "/v1/auth/signup", json={"email": email, "password": password}, headers={"Origin": ORIGIN}
    )
    assert response.status_code == 201, response.text
    return User(client, email, password, response.json())


@pytest.fixture
async def user_factory(app: FastAPI) -> AsyncIterator[Callable[..., Any]]:
    users: list[User] = []

    async def make(**kwargs: Any) -> User:
        user = await sign_up(app, **kwargs)
        users.append(user)
        return user

    yield make
    await asyncio.gather(*(u.client.aclose() for u in users))


@pytest.fixture
async def user(user_factory: Callable[..., Any]) -> User:
    made: User = await user_factory()
    return made


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="session")
async def live_url(app: FastAPI) -> AsyncIterator[str]:
    """The session app served over real HTTP on 127.0.0.1."""
    from tests.liveserver import live_server

    async with live_server(app) as url:
        yield url
