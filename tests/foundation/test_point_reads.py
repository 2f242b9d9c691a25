"""Database.read_row and read_all, the hottest reads (a bot's poll of its portfolio, of its
account). On PostgreSQL they go to asyncpg itself (pgread.py): they must give exactly what
SQLAlchemy gives, amounts included, and a connection the server dropped must fail as SQLAlchemy
fails (an error the service answers with 503), never with the driver's own exception, and leave
the next read working."""

from collections.abc import AsyncIterator
from decimal import Decimal
from typing import Any

import asyncpg
import pytest
from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Integer,
    MetaData,
    String,
    Table,
    bindparam,
    event,
    func,
    select,
)
from sqlalchemy.exc import DBAPIError

from papertrade.db import Database
from papertrade.kit.dbtypes import DecimalType

META = MetaData()
PROBE = Table(
    "point_read_probe",
    META,
    Column("id", Integer, primary_key=True),
    Column("amount", DecimalType),
    Column("name", String(20)),
    Column("flag", Boolean),
    Column("deleted_at", BigInteger),
)
READ = select(*PROBE.columns).where(PROBE.c.id == bindparam("id"))
# A LIMIT is a value the statement holds: the read sends it too (the account read has one).
UP_TO = select(*PROBE.columns).where(PROBE.c.id <= bindparam("id")).order_by(PROBE.c.id).limit(10)
ROWS: list[dict[str, Any]] = [
    {"id": 1, "amount": Decimal("12345.67891234"), "name": "ünïcode", "flag": True},
    {"id": 2, "amount": Decimal("-0.00000001"), "name": "", "flag": False},
    {"id": 3, "amount": None, "name": None, "flag": None},
]
for number, probe in enumerate(ROWS):
    probe["deleted_at"] = 1_717_000_000_000 if number == 1 else None


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    database = Database(database_url)
    async with database.engine.begin() as connection:
        await connection.run_sync(META.drop_all)
        await connection.run_sync(META.create_all)
        await connection.execute(PROBE.insert(), ROWS)
    yield database
    async with database.engine.begin() as connection:
        await connection.run_sync(META.drop_all)
    await database.dispose()


async def test_a_point_read_gives_what_sqlalchemy_gives(database: Database) -> None:
    statements: list[str] = []

    def seen(*args: Any) -> None:
        statements.append(args[2])

    event.listen(database.engine.sync_engine, "before_cursor_execute", seen)
    for expected in ROWS:
        row = await database.read_row(READ, {"id": expected["id"]})
        assert row == expected
        if expected["amount"] is not None:
            assert row is not None and type(row["amount"]) is Decimal
    assert await database.read_row(READ, {"id": 4}) is None
    event.remove(database.engine.sync_engine, "before_cursor_execute", seen)
    # On PostgreSQL none of them went through SQLAlchemy's execution (on SQLite they run on the
    # event loop's own engine, which this listener does not see either).
    assert statements == []

    async with database.engine.connect() as connection:
        for expected in ROWS:
            through_sqlalchemy = (await connection.execute(READ, {"id": expected["id"]})).one()
            read = await database.read_row(READ, {"id": expected["id"]})
            assert dict(through_sqlalchemy._mapping) == read


async def test_reads_of_several_statements_give_what_sqlalchemy_gives(database: Database) -> None:
    statements: list[str] = []

    def seen(*args: Any) -> None:
        statements.append(args[2])

    event.listen(database.engine.sync_engine, "before_cursor_execute", seen)
    every, first, none = await database.read_all(
        [(UP_TO, {"id": 3}), (READ, {"id": 1}), (UP_TO, {"id": 0})]
    )
    event.remove(database.engine.sync_engine, "before_cursor_execute", seen)
    assert (every, first, none) == (ROWS, [ROWS[0]], [])
    assert type(every[1]["amount"]) is Decimal
    assert statements == []  # on PostgreSQL, through asyncpg itself
    async with database.engine.connect() as connection:
        through_sqlalchemy = (await connection.execute(UP_TO, {"id": 3})).all()
    assert [dict(row._mapping) for row in through_sqlalchemy] == every


async def _first_row(database: Database, how: str) -> dict[str, Any] | None:
    if how == "read_row":
        return await database.read_row(READ, {"id": 1})
    (rows,) = await database.read_all([(READ, {"id": 1})])
    return rows[0] if rows else None


@pytest.mark.parametrize("how", ["read_row", "read_all"])
async def test_a_dropped_connection_fails_as_sqlalchemy_fails_and_the_next_read_works(
    database: Database, database_url: str, how: str
) -> None:
    if database.is_sqlite:
        pytest.skip("a server that drops connections is PostgreSQL's")
    # The pool's one connection (reads here run one at a time); other connections to the test
    # database (other fixtures' pools) are left alone.
    backend = await database.read_row(select(func.pg_backend_pid().label("pid")), {})
    assert backend is not None and await database.read_row(READ, {"id": 1}) == ROWS[0]
    admin = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", backend["pid"])
    finally:
        await admin.close()
    outcome: dict[str, Any] | DBAPIError | None
    try:
        outcome = await _first_row(database, how)
    except DBAPIError as exc:  # what faults/ answers with 503, not asyncpg's own exception
        outcome = exc
    if isinstance(outcome, DBAPIError):
        assert outcome.connection_invalidated
    else:
        assert outcome == ROWS[0]  # a slow machine: the pool's ping replaced the connection first
    assert await _first_row(database, how) == ROWS[0]
