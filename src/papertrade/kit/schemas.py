"""Native wire types: USDT as JSON numbers with 6 decimals, prices and sizes as JSON numbers."""

from decimal import Decimal
from typing import Annotated

from pydantic import BaseModel, ConfigDict, PlainSerializer

from papertrade.kit.decimals import usdt6


def _money(value: Decimal) -> float:
    # A decimal with at most 15 significant digits survives the float exactly, and
    # JSON has no decimal type; the spec asks for a number with 6 decimals.
    return float(usdt6(value))


def _number(value: Decimal) -> float:
    return float(value)


Money = Annotated[Decimal, PlainSerializer(_money, return_type=float, when_used="json")]
Number = Annotated[Decimal, PlainSerializer(_number, return_type=float, when_used="json")]


class Schema(BaseModel):
    """Base of every /v1 request and response model."""

    model_config = ConfigDict(from_attributes=True)


class StrictInput(BaseModel):
    """Base of request bodies: unknown fields are refused, strings are stripped."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Ok(Schema):
    ok: bool = True
