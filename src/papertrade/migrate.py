"""Alembic migrations, applied at start and by `papertrade db upgrade`."""

import functools
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncEngine

MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATION_LOCK = 0x6D696772  # "migr": processes starting together migrate one at a time


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url)
    return config


@functools.cache
def _heads() -> frozenset[str]:
    """The newest revisions. Read from the scripts once per process: loading them is most of
    what a start costs when the schema is current (the test suite starts hundreds of apps)."""
    return frozenset(ScriptDirectory.from_config(alembic_config("")).get_heads())


async def upgrade(engine: AsyncEngine) -> None:
    """Bring the schema to the newest revision over the service's own engine."""

    def run(connection: Connection) -> None:
        if frozenset(MigrationContext.configure(connection).get_current_heads()) == _heads():
            return  # current: nothing to load or run
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
