"""Reads on PostgreSQL through asyncpg itself, for the hottest reads (a bot's polls).

Through SQLAlchemy a point read costs about three times the driver's own work (the connection's
execution context, the adapter's cursor, a greenlet hop per call: BENCHMARKS.md). A statement
read here is compiled once by SQLAlchemy for the engine's dialect, and each parameter and column
is converted as SQLAlchemy would convert it (its type's processors for that dialect: amounts
stay exact Decimals), so the row is the same as SQLAlchemy's. Database.read_row sends a read
whose driver call fails back through SQLAlchemy on the same connection, which then fails or
succeeds as any statement would (a lost connection is recognised, the pool refreshed, and the
request answered 503)."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Dialect, Select
from sqlalchemy.ext.asyncio import AsyncConnection

Convert = Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    convert: Convert
    required: bool  # given at each read (a `bindparam`); else the statement's own value
    value: Any  # for one the statement holds (a LIMIT, a literal compared with)


@dataclass(frozen=True, slots=True)
class DriverRead:
    statement: Select[Any]  # held, so that the id keying a cache of these is never reused
    sql: str
    params: tuple[Param, ...]  # in the SQL's order
    columns: tuple[tuple[str, Convert], ...]


def compile_read(statement: Select[Any], dialect: Dialect) -> DriverRead:
    compiled = statement.compile(dialect=dialect)
    params = []
    for name in compiled.positiontup or ():
        bind = compiled.binds[name]
        convert = bind.type.dialect_impl(dialect).bind_processor(dialect)
        params.append(Param(name, convert, bind.required, bind.effective_value))
    selected = statement.selected_columns
    columns = tuple(
        (key, column.type.dialect_impl(dialect).result_processor(dialect, None))
        for key, column in zip(selected.keys(), selected, strict=True)
    )
    return DriverRead(statement, compiled.string, tuple(params), columns)


async def fetch_row(
    connection: AsyncConnection, read: DriverRead, values: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The first row as {column: value}; raises what the driver raises."""
    driver = await _driver(connection)
    record = await driver.fetchrow(read.sql, *_arguments(read, values))
    return None if record is None else _row(read, record)


async def fetch_rows(
    connection: AsyncConnection, read: DriverRead, values: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Every row, each as {column: value}; raises what the driver raises."""
    driver = await _driver(connection)
    return [
        _row(read, record) for record in await driver.fetch(read.sql, *_arguments(read, values))
    ]


async def _driver(connection: AsyncConnection) -> Any:
    driver = (await connection.get_raw_connection()).driver_connection
    if driver is None:
        raise ConnectionError("the pooled connection has no driver connection")
    return driver


def _arguments(read: DriverRead, values: Mapping[str, Any]) -> list[Any]:
    arguments = []
    for param in read.params:
        value = values[param.name] if param.required or param.name in values else param.value
        arguments.append(value if param.convert is None else param.convert(value))
    return arguments


def _row(read: DriverRead, record: Any) -> dict[str, Any]:
    return {
        name: value if convert is None else convert(value)
        for (name, convert), value in zip(read.columns, record, strict=True)
    }
