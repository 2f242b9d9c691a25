"""Request and response bodies of /v1/auth and /v1/user."""

from pydantic import EmailStr, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from papertrade.kit.schemas import Schema, StrictInput
from papertrade.users.passwords import MAX_LENGTH, MIN_LENGTH, too_common


class SignUp(StrictInput):
    email: EmailStr = Field(max_length=320, examples=["trader@example.com"])
    password: str = Field(
        min_length=MIN_LENGTH,
        max_length=MAX_LENGTH,
        examples=["correct horse battery"],
        description="8 to 256 characters; commonly used passwords are refused.",
    )
    invite_code: str | None = Field(
        default=None,
        max_length=32,
        description="Required when registration is invite_only or waitlist (docs/launch.md).",
    )

    @field_validator("password")
    @classmethod
    def _not_common(cls, password: str, info: ValidationInfo) -> str:
        if too_common(password, info.data.get("email")):
            raise PydanticCustomError(
                "common_password",
                "This password is too easy to guess: it is a commonly used password or close to "
                "one. Choose another; a few unrelated words make a good one.",
            )
        return password


class SignIn(StrictInput):
    """Shapes are not judged at sign-in: whatever does not match is a wrong password (401)."""

    email: str = Field(examples=["trader@example.com"])
    password: str = Field(examples=["correct horse battery"])


class UserRead(Schema):
    id: int
    email: str
    display_name: str
    tier: str
    created_at: int
