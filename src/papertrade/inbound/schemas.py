"""Bodies of the inbound webhook endpoints."""

from decimal import Decimal
from typing import Literal

from pydantic import Field

from papertrade.kit.ids import Id
from papertrade.kit.schemas import Number, Schema, StrictInput


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
    signal_portfolio_id: int | None = Field(
        default=None, description="Each alert also trades this portfolio (none: it only notifies)."
    )
    signal_action: str | None = Field(
        default=None, description="buy, sell or close, unless the alert names an `action`."
    )
    signal_size_percent: Number | None = Field(
        default=None, description="Margin per alert, in percent of the portfolio's equity."
    )


class SourceSignal(StrictInput):
    portfolio_id: Id | None = Field(description="Your portfolio to trade, or null to stop.")
    action: Literal["buy", "sell", "close"] = "buy"
    size_percent: Decimal = Field(default=Decimal(5), gt=0, le=100, decimal_places=4)


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
