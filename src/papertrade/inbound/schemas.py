"""Bodies of the inbound webhook endpoints."""

from typing import Literal

from pydantic import Field

from papertrade.kit.schemas import Schema, StrictInput


class SourceCreate(StrictInput):
    provider: Literal["finnhub"] = Field(examples=["finnhub"])
    note: str = Field(default="", max_length=200)


class SourceRead(Schema):
    id: int
    provider: str
    note: str
    url: str = Field(description="Paste into the provider's webhook settings.")
    created_at: int
    revoked_at: int | None


class SourceCreated(SourceRead):
    secret: str = Field(
        description="The provider sends it in X-Finnhub-Secret; shown only in this response."
    )


class EventRead(Schema):
    id: int
    event_id: str
    type: str
    body: str = Field(description="The raw body as received.")
    received_at: int
    processed_at: int | None
    outcome: str


class EventPage(Schema):
    events: list[EventRead]
    next_before_id: int | None


class Accepted(Schema):
    ok: bool = True
    duplicate: bool
