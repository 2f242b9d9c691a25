"""Bodies of /v1/inbox."""

from typing import Any

from pydantic import Field, StrictBool

from papertrade.kit.schemas import Schema, StrictInput


class NotificationRead(Schema):
    id: int
    kind: str = Field(
        description="fill, liquidation, funding, signal, security… (docs/notifications.md)"
    )
    title: str
    body: str
    data: dict[str, Any] = Field(description="What the notification is about (ids, symbol…).")
    portfolio_id: int | None
    link: str | None = Field(
        default=None,
        description="The page it is about, as a path: the portfolio's or strategy's (null: none).",
    )
    created_at: int
    read_at: int | None = Field(description="When it was marked read; null while unread.")


class NotificationPage(Schema):
    notifications: list[NotificationRead]
    unread_count: int = Field(description="Unread notifications of every kind.")
    next_before_id: int | None = Field(description="Pass as before_id for the next (older) page.")


class UnreadCount(Schema):
    unread_count: int


class ReadAll(StrictInput):
    kind: str | None = Field(default=None, max_length=40, description="Only this kind.")


class Marked(Schema):
    marked: int = Field(description="How many notifications were marked read.")


class ChannelChoice(StrictInput):
    inbox: StrictBool | None = None
    telegram: StrictBool | None = None
    email: StrictBool | None = None


class PreferencesUpdate(StrictInput):
    preferences: dict[str, ChannelChoice] = Field(
        max_length=50,
        examples=[{"funding": {"inbox": False}, "fill": {"telegram": True}}],
        description="Kind → the channels to change; channels not named keep their value.",
    )


class Preference(Schema):
    kind: str
    description: str
    inbox: bool
    telegram: bool
    email: bool
    defaults: dict[str, bool]
    always: list[str] = Field(description="Channels that cannot be turned off for this kind.")


class Preferences(Schema):
    preferences: list[Preference]
