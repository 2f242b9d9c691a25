"""Alembic environment: runs on the connection the service hands over."""

from alembic import context

import papertrade.models  # noqa: F401  (registers every table)
from papertrade.db import Base

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through `papertrade db upgrade`")
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
