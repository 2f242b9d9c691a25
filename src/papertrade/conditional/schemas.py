"""Bodies of /v1/conditional-order (native shape: lower-case types, `mark` | `last` prices)."""

from decimal import Decimal
from typing import Literal

from pydantic import Field, model_validator

from papertrade.conditional.views import conditional_data
from papertrade.kit.ids import Id
from papertrade.kit.schemas import Number, Schema, StrictInput
from papertrade.models import ConditionalOrder

ConditionalKind = Literal[
    "stop", "stop_market", "take_profit", "take_profit_market", "trailing_stop_market"
]


class ConditionalCreate(StrictInput):
    portfolio_id: Id
    symbol: str = Field(min_length=1, max_length=30, examples=["BTCUSDT"])
    side: Literal["buy", "sell"]
    type: ConditionalKind
    trigger_price: Decimal | None = Field(
        default=None,
        gt=0,
        le=Decimal(10) ** 10,
        decimal_places=8,
        description="Not for trailing stops.",
    )
    price: Decimal | None = Field(
        default=None,
        gt=0,
        le=Decimal(10) ** 10,
        decimal_places=8,
        description="Limit price of stop / take_profit.",
    )
    quantity: Decimal | None = Field(default=None, gt=0, le=Decimal(10) ** 12, decimal_places=8)
    close_position: bool = Field(
        default=False, description="Close the whole position when it triggers (no quantity)."
    )
    reduce_only: bool = False
    working_price: Literal["mark", "last"] = Field(
        default="last", description="The price the trigger watches."
    )
    price_protect: bool = False
    callback_rate: Decimal | None = Field(
        default=None,
        ge=Decimal("0.1"),
        le=10,
        decimal_places=4,
        description="Trailing stops: percent, 0.1 to 10.",
    )
    activation_price: Decimal | None = Field(
        default=None, gt=0, le=Decimal(10) ** 10, decimal_places=8
    )
    time_in_force: Literal["GTC", "IOC", "FOK", "GTX"] = "GTC"
    client_order_id: str | None = Field(
        default=None, min_length=1, max_length=36, pattern=r"^[\.A-Z\:/a-z0-9_-]{1,36}$"
    )

    @model_validator(mode="after")
    def _consistent(self) -> "ConditionalCreate":
        if self.close_position == (self.quantity is not None):
            raise ValueError("give a quantity, or close_position: true (not both)")
        return self


class ConditionalRead(Schema):
    id: int
    portfolio_id: int
    symbol: str
    side: str
    position_side: str = Field(description="BOTH in one-way mode; LONG or SHORT in hedge mode")
    type: str
    working_price: str
    trigger_price: Number | None
    price: Number | None
    quantity: Number | None
    close_position: bool
    reduce_only: bool
    price_protect: bool
    callback_rate: Number | None
    activation_price: Number | None
    trailing_extreme: Number | None = Field(
        default=None,
        description="Trailing stops: the best price since activation (saved about once a second).",
    )
    time_in_force: str
    status: str = Field(description="new, triggered, canceled, rejected or expired")
    client_order_id: str
    actual_order_id: int | None = Field(description="The order placed when it triggered.")
    reason: str | None
    source: str
    created_at: int
    updated_at: int
    triggered_at: int | None


class ConditionalPage(Schema):
    conditional_orders: list[ConditionalRead]
    next_before_id: int | None = Field(description="Pass as before_id for the next (older) page.")


def read(row: ConditionalOrder) -> ConditionalRead:
    """The native view of a conditional order."""
    data = conditional_data(row)
    data["working_price"] = "mark" if row.working_type == "MARK_PRICE" else "last"
    data["client_order_id"] = data.pop("client_algo_id")
    return ConditionalRead.model_validate(data)


class PositionTpSl(StrictInput):
    take_profit: Decimal | None = Field(
        default=None,
        gt=0,
        le=Decimal(10) ** 10,
        decimal_places=8,
        description="Trigger price; none: no TP.",
    )
    stop_loss: Decimal | None = Field(
        default=None,
        gt=0,
        le=Decimal(10) ** 10,
        decimal_places=8,
        description="Trigger price; none: no SL.",
    )
    working_price: Literal["mark", "last"] = "mark"
    position_side: Literal["BOTH", "LONG", "SHORT"] | None = Field(
        default=None,
        description="Hedge mode: the LONG or SHORT position to protect; omitted, the side that "
        "is open (required when both are).",
    )
