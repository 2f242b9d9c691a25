"""Migration 0015_realism_profile upgrades an existing database in place: every portfolio is on
the "mark" profile and keeps filling at the mark (SQLite, and PostgreSQL when configured)."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from alembic import command
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from papertrade.config import Settings
from papertrade.kit.security import hash_password
from papertrade.migrate import alembic_config
from tests.conftest import ORIGIN, client_for, running_app, unique_email
from tests.trading_api.helpers import set_price

PASSWORD = "s3cret-pass"
SCALE = 10**8  # DecimalType keeps units of 10^-8


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


async def test_existing_portfolios_upgrade_onto_the_mark_profile(
    isolated_settings: Settings,
) -> None:
    email = unique_email("realism")
    async with _engine(isolated_settings.database_url) as engine:
        await _migrate(engine, "0014_3")
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO users (email, password_hash, display_name, tier, created_at, "
                    "updated_at) VALUES (:email, :hash, :email, 'free', 1, 1)"
                ),
                {"email": email, "hash": hash_password(PASSWORD)},
            )
            user_id = await connection.scalar(
                text("SELECT id FROM users WHERE email = :email"), {"email": email}
            )
            await connection.execute(
                text(
                    "INSERT INTO portfolios (user_id, name, description, visibility, "
                    "initial_balance, balance, maker_fee_rate, taker_fee_rate, created_at, "
                    "updated_at) VALUES (:user, 'old', '', 'private', :b, :b, :maker, :taker, 1, 1)"
                ),
                {"user": user_id, "b": 10_000 * SCALE, "maker": 20_000, "taker": 50_000},
            )
        await _migrate(engine, "head")
        async with engine.connect() as connection:
            profiles = (await connection.execute(text("SELECT realism FROM portfolios"))).all()
        assert profiles == [("mark",)]

    async with running_app(isolated_settings) as app, client_for(app) as client:
        signed_in = await client.post("/v1/auth/login", json={"email": email, "password": PASSWORD})
        assert signed_in.status_code == 200, signed_in.text
        headers = {"X-CSRF-Token": client.cookies.get("csrf_token") or "", "Origin": ORIGIN}
        (portfolio,) = (await client.get("/v1/portfolios/my")).json()
        assert portfolio["realism"] == "mark"
        await set_price(app, "BTCUSDT", "60000")
        placed = await client.post(
            "/v1/order",
            json={
                "portfolio_id": portfolio["id"],
                "symbol": "BTCUSDT",
                "side": "buy",
                "type": "market",
                "quantity": "0.01",
            },
            headers=headers,
        )
        assert placed.status_code == 201, placed.text
        assert placed.json()["avg_price"] == 60000
