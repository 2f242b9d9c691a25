"""Bodies of /v1/user/api-keys."""

from typing import Literal

from pydantic import Field

from papertrade.kit.schemas import Schema, StrictInput


class ApiKeyCreate(StrictInput):
    note: str = Field(default="", max_length=200, examples=["grid bot (production)"])
    scope: Literal["read", "write"] = Field(examples=["write"])


class ApiKeyRead(Schema):
    id: int
    note: str
    scope: str
    prefix: str
    created_at: int
    last_used_at: int | None
    revoked_at: int | None


class ApiKeyCreated(ApiKeyRead):
    key: str = Field(description="The key itself; shown only in this response.")
