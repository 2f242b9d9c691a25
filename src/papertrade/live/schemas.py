"""Bodies and answers of /v1/live. A secret goes in, never out."""

from decimal import Decimal
from typing import Literal

from pydantic import Field

from papertrade.kit.ids import Id
from papertrade.kit.schemas import DecimalText, Money, Schema, StrictInput

Amount = Decimal


class LiveAccountCreate(StrictInput):
    exchange: Literal["binanceusdm"] = "binanceusdm"
    label: str = Field(min_length=1, max_length=100)
    api_key: str = Field(min_length=1, max_length=128)
    api_secret: str = Field(min_length=1, max_length=256)
    # the bound signal source: at most one of these
    source_portfolio_id: Id | None = None
    source_strategy_id: Id | None = None
    source_token_id: Id | None = None
    sizing: Literal["ratio", "fixed"] = "ratio"
    sizing_value: Decimal = Field(default=Decimal(1), gt=0, le=Decimal(1_000_000), decimal_places=6)
    symbols: list[str] = Field(default_factory=list, max_length=100)
    max_position_notional: Decimal | None = Field(default=None, gt=0, le=10**9, decimal_places=6)
    max_daily_loss: Decimal | None = Field(default=None, gt=0, le=10**9, decimal_places=6)


class LiveAccountUpdate(StrictInput):
    label: str | None = Field(default=None, min_length=1, max_length=100)
    source_portfolio_id: Id | None = None
    source_strategy_id: Id | None = None
    source_token_id: Id | None = None
    unbind: bool = False
    sizing: Literal["ratio", "fixed"] | None = None
    sizing_value: Decimal | None = Field(
        default=None, gt=0, le=Decimal(1_000_000), decimal_places=6
    )
    symbols: list[str] | None = Field(default=None, max_length=100)
    max_position_notional: Decimal | None = Field(default=None, gt=0, le=10**9, decimal_places=6)
    max_daily_loss: Decimal | None = Field(default=None, gt=0, le=10**9, decimal_places=6)
    resume: bool = False  # re-arm an account the kill switch stopped


class KeyRotation(StrictInput):
    api_key: str = Field(min_length=1, max_length=128)
    api_secret: str = Field(min_length=1, max_length=256)


class KillRequest(StrictInput):
    close_positions: bool = False


class LiveAccountRead(Schema):
    id: int
    exchange: str
    label: str
    api_key_hint: str
    withdrawals: str
    source_portfolio_id: int | None
    source_strategy_id: int | None
    source_token_id: int | None
    sizing: str
    sizing_value: DecimalText
    symbols: list[str]
    max_position_notional: Money | None
    max_daily_loss: Money | None
    status: str
    kill_reason: str
    killed_at: int | None
    created_at: int


class LiveOrderRead(Schema):
    id: int
    source_order_id: int
    client_order_id: str
    symbol: str
    side: str
    reduce_only: bool  # the source order closed (part of) its position
    source_quantity: DecimalText
    quantity: DecimalText | None
    status: str
    attempts: int
    exchange_order_id: str | None
    answer: str
    created_at: int
    updated_at: int


class KillReport(Schema):
    account_id: int
    cancelled_symbols: list[str]
    closed_symbols: list[str]
    error: str | None


class ReconciliationRead(Schema):
    id: int
    live_account_id: int
    checked_at: int
    status: str  # ok | drift | error
    drift: dict[str, object]
    error: str
