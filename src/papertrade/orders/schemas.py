"""Bodies of /v1/order."""

from decimal import Decimal
from typing import Literal

from pydantic import AliasChoices, Field, model_validator

from papertrade.conditional.schemas import ConditionalRead
from papertrade.kit.ids import Id
from papertrade.kit.schemas import Money, Number, Schema, StrictInput


class OrderCreate(StrictInput):
    portfolio_id: Id
    symbol: str = Field(min_length=1, max_length=30, examples=["BTCUSDT"])
    side: Literal["buy", "sell"] | None = Field(
        default=None, description="Required for action=open; for action=close it is forced."
    )
    type: Literal["market", "limit"] = "market"
    size_usd: Decimal | None = Field(default=None, gt=0, le=Decimal(10) ** 10, examples=[500])
    quantity: Decimal | None = Field(default=None, gt=0, le=Decimal(10) ** 12, examples=[0.01])
    price: Decimal | None = Field(default=None, gt=0, le=Decimal(10) ** 10, examples=[65000])
    action: Literal["open", "close"] = "open"
    time_in_force: Literal["GTC", "IOC", "FOK", "GTX"] = "GTC"
    position_side: Literal["BOTH", "LONG", "SHORT"] | None = Field(
        default=None,
        description="Hedge mode: the LONG or SHORT position the order trades (a sell on LONG "
        "closes it). Omitted: BOTH in one-way mode, in hedge mode what the side and action imply.",
    )
    client_order_id: str | None = Field(
        default=None, min_length=1, max_length=36, pattern=r"^[\.A-Z\:/a-z0-9_-]{1,36}$"
    )
    take_profit: Decimal | None = Field(
        default=None,
        gt=0,
        le=Decimal(10) ** 10,
        decimal_places=8,
        description="Attach a take-profit: closes the position at market when the mark reaches it.",
    )
    stop_loss: Decimal | None = Field(
        default=None,
        gt=0,
        le=Decimal(10) ** 10,
        decimal_places=8,
        description="Attach a stop-loss: closes the position at market when the mark reaches it.",
    )

    @model_validator(mode="after")
    def _consistent(self) -> "OrderCreate":
        if (self.size_usd is None) == (self.quantity is None):
            raise ValueError("give exactly one of size_usd (USDT) or quantity (base units)")
        if self.type == "limit" and self.price is None:
            raise ValueError("a limit order needs a price")
        if self.type == "market" and self.price is not None:
            raise ValueError("a market order takes no price; it fills at the mark price")
        if self.action == "open" and self.side is None:
            raise ValueError("side is required to open")
        if self.action == "close" and (self.take_profit or self.stop_loss):
            raise ValueError("take_profit and stop_loss are attached to opening orders")
        return self


class OrderRead(Schema):
    id: int
    portfolio_id: int
    symbol: str
    side: str
    type: str
    action: str
    position_side: str = "BOTH"
    time_in_force: str
    status: str
    size_usd: Money
    quantity: Number
    price: Number | None
    avg_price: Number
    filled_quantity: Number
    commission: Money
    realized_pnl: Money
    client_order_id: str
    source: str
    reason: str | None = Field(
        default=None,
        validation_alias=AliasChoices("reason", "reject_reason"),
        description="Why it was rejected or expired, when it was.",
    )
    placed_by: str | None = Field(
        default=None,
        description="Who placed it when the user did not: stop-loss, stop, take-profit, "
        "trailing stop, liquidation, copy trading, strategy, signal.",
    )
    conditional_id: int | None = Field(
        default=None, description="The conditional order that placed it, when one did."
    )
    created_at: int
    updated_at: int


class OrderPlaced(OrderRead):
    attached: list[ConditionalRead] = Field(
        default_factory=list, description="The take-profit / stop-loss attached to this entry."
    )


class OrderPage(Schema):
    orders: list[OrderRead]
    next_before_id: int | None = Field(description="Pass as before_id for the next (older) page.")


class OrderPreviewInput(StrictInput):
    """What the ticket holds so far; nothing is checked beyond what a preview needs."""

    portfolio_id: Id
    symbol: str = Field(min_length=1, max_length=30, examples=["BTCUSDT"])
    side: Literal["buy", "sell"] | None = None
    type: Literal["market", "limit"] = "market"
    size_usd: Decimal | None = Field(default=None, gt=0, le=Decimal(10) ** 10, decimal_places=8)
    quantity: Decimal | None = Field(default=None, gt=0, le=Decimal(10) ** 12, decimal_places=8)
    price: Decimal | None = Field(default=None, gt=0, le=Decimal(10) ** 10, decimal_places=8)
    action: Literal["open", "close"] = "open"


class OrderPreviewRead(Schema):
    symbol: str
    side: str | None
    quantity: Number = Field(description="What would be sent, after rounding to the step.")
    price: Number = Field(description="The mark for a market order, the limit price otherwise.")
    notional: Money
    leverage: int
    initial_margin: Money
    fee_rate: Number
    fee: Money
    liquidity: str
    available: Money
    liquidation_price: Number | None = Field(
        description="The position's estimated (cross) liquidation price after the fill."
    )
    min_quantity: Number
    min_notional: Money
    minimum: str = Field(description='e.g. "min 0.002 BTC ≈ 186.00 USDT at 93000.0"')
    problems: list[str] = Field(description="Why the order would be refused, in plain words.")
