"""Bodies of /v1/portfolios."""

from decimal import Decimal
from typing import Literal

from pydantic import Field

from papertrade.kit.schemas import DecimalText, Money, Schema, StrictInput

Visibility = Literal["private", "public"]
# How fills depart from "fill at the mark" (trading/realism.py, docs/trading.md "Realism").
RealismProfile = Literal["mark", "realistic"]


class PortfolioCreate(StrictInput):
    name: str = Field(min_length=1, max_length=100, examples=["BTC swing"])
    description: str = Field(default="", max_length=2000)
    initial_balance: Decimal = Field(
        default=Decimal(10000), gt=0, le=Decimal(100_000_000), decimal_places=6, examples=[10000]
    )
    visibility: Visibility = "private"
    realism: RealismProfile = "mark"


class PortfolioUpdate(StrictInput):
    name: str | None = Field(default=None, min_length=1, max_length=100)
    description: str | None = Field(default=None, max_length=2000)
    visibility: Visibility | None = None
    realism: RealismProfile | None = None


class PortfolioRead(Schema):
    id: int
    code: str
    name: str
    description: str
    visibility: str
    initial_balance: Money
    balance: Money
    maker_fee_rate: DecimalText
    taker_fee_rate: DecimalText
    realism: str
    created_at: int
    updated_at: int


class CompatKeyCreate(StrictInput):
    note: str = Field(default="", max_length=200, examples=["freqtrade on my VPS"])


class CompatKeyRead(Schema):
    id: int
    portfolio_id: int
    note: str
    prefix: str
    created_at: int
    last_used_at: int | None
    revoked_at: int | None


class CompatKeyCreated(CompatKeyRead):
    api_key: str
    api_secret: str = Field(description="Shown only in this response.")


class WebhookTokenRead(Schema):
    id: int
    portfolio_id: int
    prefix: str
    created_at: int
    last_used_at: int | None
    revoked_at: int | None


class WebhookTokenCreated(WebhookTokenRead):
    webhook_token: str = Field(description="Shown only in this response.")
    url: str = Field(description="Paste this into the alert's webhook URL field.")
