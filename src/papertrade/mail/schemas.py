"""Bodies of the email endpoints."""

from typing import Literal

from pydantic import EmailStr, Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from papertrade.kit.schemas import Schema, StrictInput
from papertrade.users.passwords import MAX_LENGTH, MIN_LENGTH, too_common


class EmailAddressState(Schema):
    email: str
    verified: bool
    suppressed: bool = Field(
        description="Mail to this address bounced or was reported as spam: only account mail "
        "(verification, reset) is sent to it. Change the address to get notifications again."
    )
    suppressed_reason: str | None
    frequency: str = Field(
        default="instant",
        description="Notification mail: instant (one mail each), daily (one digest a day of the "
        "unread ones) or off.",
    )


class EmailFrequency(StrictInput):
    frequency: Literal["instant", "daily", "off"]


class EmailMessageRead(Schema):
    id: int
    to_address: str
    subject: str
    kind: str = Field(description="The notification kind, digest, or empty for account mail.")
    transactional: bool
    status: str = Field(
        description="pending, sending, handover, sent, failed, interrupted (perhaps delivered, "
        "never re-sent), suppressed, delayed, delivered, bounced or complained; held (past the "
        "hourly limit) and then digested (sent within one mail with the others held)."
    )
    attempts: int
    error: str
    created_at: int
    sent_at: int | None


class EmailMessagePage(Schema):
    messages: list[EmailMessageRead]
    next_before_id: int | None


class VerificationSent(Schema):
    sent: bool = Field(description="false: one was sent less than a minute ago.")
    email: str


class EmailChange(StrictInput):
    new_email: EmailStr = Field(max_length=320, examples=["new-address@example.com"])
    current_password: str = Field(max_length=MAX_LENGTH)


class TokenBody(StrictInput):
    token: str = Field(min_length=1, max_length=200)


class ForgotPassword(StrictInput):
    email: str = Field(max_length=320, examples=["trader@example.com"])


class ResetPassword(StrictInput):
    token: str = Field(min_length=1, max_length=200)
    password: str = Field(min_length=MIN_LENGTH, max_length=MAX_LENGTH)

    @field_validator("password")
    @classmethod
    def _not_common(cls, password: str, info: ValidationInfo) -> str:
        if too_common(password):
            raise PydanticCustomError(
                "common_password",
                "This password is too easy to guess: it is a commonly used password or close to "
                "one. Choose another; a few unrelated words make a good one.",
            )
        return password


class Done(Schema):
    ok: bool = True


class Unsubscribed(Schema):
    unsubscribed: str = Field(description="The kind no longer mailed, or 'all'.")
