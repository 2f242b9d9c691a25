"""Alembic migrations, applied at start and by `papertrade db upgrade`."""

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATION_LOCK = 0x6D696772  # "migr": processes starting together migrate one at a time


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url)
    return config


async def upgrade(engine: AsyncEngine) -> None:
    """Bring the schema to the newest revision over the service's own engine."""

    def run(connection: object) -> None:
        config = alembic_config(str(engine.url))
        config.attributes["connection"] = connection
        command.upgrade(config, "head")

    async with engine.begin() as connection:
        if connection.dialect.name == "postgresql":
            # `serve --workers N` on a new database starts N processes at once; the first
            # migrates, the others wait here and then find the schema current.
            await connection.execute(
                text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK}
            )
        await connection.run_sync(run)
