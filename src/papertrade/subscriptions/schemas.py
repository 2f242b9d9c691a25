"""Bodies of /v1/subscribe, /v1/subscriptions/* and the author's subscriber panel."""

from decimal import Decimal
from typing import Literal

from pydantic import Field, field_validator, model_validator

from papertrade.kit.ids import Id
from papertrade.kit.schemas import Money, Schema, StrictInput

Channel = Literal["inbox", "telegram", "email"]
EventKind = Literal["open", "close", "modify", "tp_hit", "sl_hit"]
ALL_EVENTS: list[EventKind] = ["open", "close", "modify", "tp_hit", "sl_hit"]


def _inbox() -> list[Channel]:
    return ["inbox"]


def _symbols(values: list[str]) -> list[str]:
    if any(not (0 < len(s) <= 30 and s.isascii() and s.isalnum()) for s in values):
        raise ValueError("symbols are names like BTCUSDT")
    return sorted({s.upper() for s in values})


class SubscribeBody(StrictInput):
    """Follow a portfolio (its trades) or a strategy (its executed signals): one of the two."""

    portfolio_id: Id | None = None
    strategy_id: Id | None = None
    tier: Literal["free", "paid"] = "free"
    channels: list[Channel] = Field(default_factory=_inbox, min_length=1, max_length=3)
    events: list[EventKind] = Field(
        default_factory=lambda: list(ALL_EVENTS), min_length=1, max_length=5
    )
    symbols: list[str] = Field(default_factory=list, max_length=50)

    _check_symbols = field_validator("symbols")(_symbols)

    @model_validator(mode="after")
    def _one_target(self) -> "SubscribeBody":
        if (self.portfolio_id is None) == (self.strategy_id is None):
            raise ValueError("give portfolio_id or strategy_id (one of the two)")
        return self


class SubscriptionChange(StrictInput):
    channels: list[Channel] | None = Field(default=None, min_length=1, max_length=3)
    events: list[EventKind] | None = Field(default=None, min_length=1, max_length=5)
    symbols: list[str] | None = Field(default=None, max_length=50)

    @field_validator("symbols")
    @classmethod
    def _check(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _symbols(value)


class PriceBody(StrictInput):
    price: Decimal = Field(
        ge=0,
        le=100_000,
        decimal_places=6,
        description="USDT per 30 days for the paid tier; 0: free tier only.",
    )


class SubscriptionRead(Schema):
    id: int
    portfolio_id: int | None
    strategy_id: int | None
    tier: str
    status: str
    price: Money
    channels: list[str]
    events: list[str]
    symbols: list[str]
    started_at: int
    current_period_end: int | None
    cancel_at_period_end: bool
    cancelled_at: int | None


class Counts(Schema):
    portfolio_id: int
    active: int
    paid: int
    free: int
    price: Money = Field(description="USDT per 30 days of the paid tier (0: free only).")


class Subscriber(Schema):
    user_id: int
    tier: str
    status: str
    since: int
    channels: list[str]
    paid_total: Money
    cancelled_at: int | None


class Panel(Schema):
    counts: Counts
    past_due: int
    cancelled: int
    revenue: Money = Field(description="Every payment received from subscribers, USDT.")
    churn: float = Field(description="Cancelled ÷ everyone who ever subscribed (0 to 1).")
    subscribers: list[Subscriber]
