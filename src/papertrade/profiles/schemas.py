"""Bodies of the profile endpoints."""

import re
from zoneinfo import available_timezones

from pydantic import Field, field_validator

from papertrade.kit.schemas import Schema, StrictInput
from papertrade.users.passwords import MAX_LENGTH, MIN_LENGTH

LOCALE = re.compile(r"[a-z]{2,3}(-[A-Z]{2})?")
_ZONES = frozenset(available_timezones())


class ProfileUpdate(StrictInput):
    display_name: str | None = Field(default=None, min_length=1, max_length=80)
    bio: str | None = Field(default=None, max_length=500)
    time_zone: str | None = Field(default=None, max_length=64, examples=["Europe/Berlin"])
    locale: str | None = Field(default=None, max_length=16, examples=["en", "pt-BR"])

    @field_validator("time_zone")
    @classmethod
    def _zone(cls, value: str | None) -> str | None:
        if value is not None and value not in _ZONES:
            raise ValueError("not an IANA time zone name such as Europe/Berlin or UTC")
        return value

    @field_validator("locale")
    @classmethod
    def _locale(cls, value: str | None) -> str | None:
        if value is not None and LOCALE.fullmatch(value) is None:
            raise ValueError("a language tag such as en or pt-BR")
        return value

    @field_validator("display_name")
    @classmethod
    def _name(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or "@" in value):
            raise ValueError("a name shown to others: not blank, and no e-mail address")
        return value.strip() if value is not None else None


class ProfileRead(Schema):
    user_id: int
    display_name: str
    bio: str
    time_zone: str
    locale: str
    initials: str
    avatar_url: str
    has_avatar: bool


class PublicPortfolioLink(Schema):
    code: str
    name: str


class PublicProfile(Schema):
    user_id: int
    display_name: str
    bio: str
    initials: str
    avatar_url: str
    portfolios: list[PublicPortfolioLink]
    strategies: list[PublicPortfolioLink] = Field(
        default_factory=list, description="The user's public strategies (code, name)."
    )


class PasswordChange(StrictInput):
    current_password: str = Field(max_length=MAX_LENGTH)
    new_password: str = Field(min_length=MIN_LENGTH, max_length=MAX_LENGTH)


class PasswordChanged(Schema):
    ok: bool = True
    other_sessions_signed_out: int


class AccountDelete(StrictInput):
    password: str = Field(max_length=MAX_LENGTH)
