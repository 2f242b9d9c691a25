"""Exact column types: Decimal stored as a scaled integer."""

from decimal import Decimal
from typing import Any

from sqlalchemy import BigInteger, ColumnElement, Dialect, func, type_coerce
from sqlalchemy.orm import InstrumentedAttribute
from sqlalchemy.types import TypeDecorator

SCALE = 8


def to_scaled(value: Decimal | int) -> int:
    """The stored integer of an exact amount; more than SCALE decimal places is an error."""
    if isinstance(value, float):
        raise TypeError("floats are not stored as money; pass a Decimal")
    scaled = Decimal(value).scaleb(SCALE)
    stored = int(scaled)
    if stored != scaled:
        raise ValueError(f"{value} has more than {SCALE} decimal places")
    return stored


class DecimalType(TypeDecorator[Decimal]):
    """Decimal stored as BIGINT in units of 10^-8: exact, sortable and summable on every engine."""

    impl = BigInteger
    cache_ok = True

    def process_bind_param(self, value: Decimal | int | None, dialect: Dialect) -> int | None:
        return None if value is None else to_scaled(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        if value is None:
            return None
        return Decimal(int(value)).scaleb(-SCALE)


def decimal_sum(column: ColumnElement[Any] | InstrumentedAttribute[Any]) -> ColumnElement[Decimal]:
    """SUM of a DecimalType column, 0 when there are no rows, read back as an exact Decimal."""
    return type_coerce(func.coalesce(func.sum(column), 0), DecimalType())
