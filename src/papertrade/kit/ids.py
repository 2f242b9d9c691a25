"""Database ids as callers may send them.

Every id column is a 32-bit INTEGER on PostgreSQL (64-bit on SQLite), so a number past
`ID_MAX` can name no row; it must be refused before it reaches the driver, which would fail on it
(asyncpg DataError, SQLite OverflowError) and make a clear 4xx a 500.
"""

from typing import Annotated

from pydantic import Field

ID_MAX = 2**31 - 1

# Every id in a /v1 path, query parameter or request body: out of range is a 422
# validation_error naming the field, and the bounds show in the OpenAPI document.
Id = Annotated[int, Field(ge=1, le=ID_MAX)]


def is_id(value: int) -> bool:
    """Whether `value` can be the id of a row (for ids parsed outside pydantic)."""
    return 1 <= value <= ID_MAX
