"""Bodies of /v1/tg."""

from pydantic import Field

from papertrade.kit.schemas import Schema


class TelegramLinkCreated(Schema):
    url: str = Field(description="https://t.me/<bot>?start=<code>: open it and tap Start.")
    expires_at: int = Field(description="The link works once, until then (10 minutes).")


class TelegramStatus(Schema):
    bound: bool
    status: str | None = Field(description="active, or inactive once the bot was blocked.")
    username: str | None
    bound_at: int | None


class TelegramAccepted(Schema):
    ok: bool = True
    duplicate: bool = Field(description="This update_id was received before; not processed again.")
