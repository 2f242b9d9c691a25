"""Bodies of the alert webhook and the signal history."""

from typing import Any

from pydantic import Field

from papertrade.kit.schemas import Number, Schema


class SignalOrder(Schema):
    id: int
    symbol: str
    side: str
    type: str
    action: str
    status: str
    quantity: Number
    price: Number | None
    avg_price: Number


class WebhookAccepted(Schema):
    ok: bool = True
    signal_id: int
    status: str = Field(description="executed, ignored (nothing to do) or duplicate")
    msg: str
    orders: list[SignalOrder] = Field(default_factory=list)
    duplicate_of: int | None = None


class SignalRead(Schema):
    id: int
    portfolio_id: int
    token_id: int | None
    source: str = Field(description="tv: the TradingView-style alert webhook")
    received_at: int
    content_type: str
    body: str = Field(description="The raw alert body as received.")
    body_format: str = Field(description="json or text")
    parsed: Any = Field(description="The commands the body parsed to (or the raw fields).")
    status: str = Field(
        description="executed, ignored, duplicate, rejected (not executable), stale or invalid"
    )
    error: str | None = Field(description="Error code when the signal was not executed.")
    msg: str = Field(description="What happened, or what to fix.")
    order_ids: list[int]
    duplicate_of: int | None
    processed_at: int


class SignalPage(Schema):
    signals: list[SignalRead]
    next_before_id: int | None = Field(description="Pass as before_id for the next (older) page.")
