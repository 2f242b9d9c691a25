"""The migrations build exactly the schema the models describe: a database upgraded to head has
every column, type, nullability, index and constraint the code expects, under the same names
(so a later migration that drops or alters one by name finds it), on SQLite and PostgreSQL."""

import warnings
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy.engine import Connection

import papertrade.models  # noqa: F401  (every table on the metadata)
from papertrade.config import Settings
from papertrade.db import Base
from tests.foundation.test_email_case import _engine, _migrate


def _differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    with warnings.catch_warnings():
        # SQLite cannot reflect the expression index on lower(email); PostgreSQL compares it
        warnings.simplefilter("ignore")
        return list(compare_metadata(context, Base.metadata))


async def test_a_migrated_database_is_what_the_models_describe(
    isolated_settings: Settings,
) -> None:
    async with _engine(isolated_settings.database_url) as engine:
        await _migrate(engine, "head")
        async with engine.connect() as connection:
            differences = await connection.run_sync(_differences)
    assert differences == []
