"""Native wire types: USDT as JSON numbers with 6 decimals, prices and sizes as JSON numbers.

Inputs are strict where a lax parser would book something the caller did not mean: a number is
a JSON number or a plain ASCII decimal string, and text must be storable on every database.
"""

import re
from decimal import Decimal
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    GetJsonSchemaHandler,
    PlainSerializer,
    ValidationInfo,
    field_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError

from papertrade.kit.decimals import plain, usdt6


def _money(value: Decimal) -> float:
    # A decimal with at most 15 significant digits survives the float exactly, and
    # JSON has no decimal type; the spec asks for a number with 6 decimals.
    return float(usdt6(value))


def _number(value: Decimal) -> float:
    return float(value)


Money = Annotated[Decimal, PlainSerializer(_money, return_type=float, when_used="json")]
Number = Annotated[Decimal, PlainSerializer(_number, return_type=float, when_used="json")]
# A rate kept exact as a string, written plainly ("0.0002", never "2E-4" or "0.00020000").
DecimalText = Annotated[Decimal, PlainSerializer(plain, return_type=str, when_used="json")]

# What a number may look like inside a string: "12", "-3", "0.001". Python's Decimal and int
# would also take "1_000", " 5 ", "1e3" and non-ASCII digits ("５", "٥"), none of which a
# caller means as an amount to book.
PLAIN_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")
PLAIN_DECIMAL_PATTERN = r"^-?[0-9]+(\.[0-9]+)?$"
NUMBER_TYPES = (Decimal, int, float)


def _is_number_field(annotation: Any) -> bool:
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else ()
    return any(option in NUMBER_TYPES for option in (annotation, *options))


def check_plain_number(value: Any) -> Any:
    """`value` when it is a JSON number or a plain decimal string; booleans are not numbers."""
    if isinstance(value, bool):  # JSON true is not 1
        raise PydanticCustomError("plain_number", "Input should be a number, not true or false")
    if isinstance(value, str) and PLAIN_DECIMAL.fullmatch(value) is None:
        raise PydanticCustomError(
            "plain_number",
            'Input should be a JSON number or a plain decimal string such as "12.5" '
            "(ASCII digits and one point; no spaces, separators or exponent)",
        )
    return value


def unstorable(text: str) -> str | None:
    """Why `text` cannot be stored (PostgreSQL text refuses NUL; nothing stores half a UTF-16
    surrogate pair), or None when it can."""
    if "\x00" in text:
        return "Text may not hold the NUL character (U+0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "Text may not hold an unpaired surrogate (it is not valid UTF-8)"
    return None


def check_storable(value: Any) -> Any:
    """`value` when every string in it can be stored on every database."""
    if isinstance(value, str):
        problem = unstorable(value)
        if problem:
            raise PydanticCustomError("unstorable_text", problem)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_storable(key)
            check_storable(item)
    elif isinstance(value, list):
        for item in value:
            check_storable(item)
    return value


class Schema(BaseModel):
    """Base of every /v1 request and response model."""

    model_config = ConfigDict(from_attributes=True)


class StrictInput(BaseModel):
    """Base of request bodies: unknown fields are refused, strings are stripped, every number
    is plain and no text the databases cannot keep gets in.

    The checks run on every field of every subclass, including fields added later.
    """

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    @field_validator("*", mode="before")
    @classmethod
    def _plain_and_storable(cls, value: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields.get(info.field_name or "")
        if field is not None and _is_number_field(field.annotation):
            check_plain_number(value)
        return check_storable(value)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        # Say in the OpenAPI document which strings a number field takes.
        schema = handler(core)
        for name, prop in handler.resolve_ref_schema(schema).get("properties", {}).items():
            field = cls.model_fields.get(name)
            if field is None or not _is_number_field(field.annotation):
                continue
            for branch in prop.get("anyOf", []):
                if branch.get("type") == "string":
                    branch["pattern"] = PLAIN_DECIMAL_PATTERN
        return schema


class Ok(Schema):
    ok: bool = True
