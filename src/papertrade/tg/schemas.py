"""Bodies of /v1/tg."""

from decimal import Decimal

from pydantic import Field

from papertrade.kit.ids import Id
from papertrade.kit.schemas import Number, Schema, StrictInput


class TelegramLinkCreated(Schema):
    url: str = Field(description="https://t.me/<bot>?start=<code>: open it and tap Start.")
    expires_at: int = Field(description="The link works once, until then (10 minutes).")
    qr_svg: str = Field(description="The link as a QR code (an SVG data: URI) for a phone.")


class TelegramStatus(Schema):
    bound: bool
    status: str | None = Field(description="active, or inactive once the bot was blocked.")
    username: str | None
    bound_at: int | None
    signal_portfolio_id: int | None = Field(
        default=None, description="Signals posted to the bot trade this portfolio (none: off)."
    )
    signal_size_percent: Number | None = Field(
        default=None, description="Each signal's margin, in percent of the portfolio's equity."
    )


class TelegramSignalSettings(StrictInput):
    portfolio_id: Id | None = Field(description="Your portfolio to trade, or null to stop.")
    size_percent: Decimal = Field(
        default=Decimal(5),
        gt=0,
        le=100,
        decimal_places=4,
        description="Margin per signal, in percent of equity (times the leverage: notional).",
    )


class TelegramAccepted(Schema):
    ok: bool = True
    duplicate: bool = Field(description="This update_id was received before; not processed again.")


class TelegramChannelRead(Schema):
    chat_id: int = Field(description="The channel's Telegram chat id (negative, -100…).")
    title: str
    portfolio_id: int | None = Field(description="Its Cornix signals trade this portfolio.")
    size_percent: Number = Field(description="Margin per signal, percent of equity.")
    connected_at: int


class TelegramChannelSettings(TelegramSignalSettings):
    pass


class TelegramMessageRead(Schema):
    id: int
    status: str = Field(
        description="pending, sending, sent, blocked, failed, or interrupted (the connection "
        "broke after the request was sent, or the sender died mid-send: perhaps delivered, "
        "never sent again)."
    )
    text: str
    error: str
    attempts: int
    notification_id: int | None
    created_at: int
    sent_at: int | None


class TelegramMessagePage(Schema):
    messages: list[TelegramMessageRead]
    next_before_id: int | None
