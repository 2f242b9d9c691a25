"""Request and response bodies of /v1/auth and /v1/user."""

from pydantic import EmailStr, Field

from papertrade.kit.schemas import Schema, StrictInput


class Credentials(StrictInput):
    email: EmailStr = Field(max_length=320, examples=["trader@example.com"])
    password: str = Field(min_length=8, max_length=256, examples=["correct horse battery"])


class UserRead(Schema):
    id: int
    email: str
    display_name: str
    tier: str
    created_at: int
