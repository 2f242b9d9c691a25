"""Bodies of positions and leverage endpoints."""

from decimal import Decimal
from typing import Literal

from pydantic import Field

from papertrade.kit.schemas import Money, Number, Schema, StrictInput


class PositionRead(Schema):
    symbol: str
    position_side: str = Field(description="BOTH in one-way mode; LONG or SHORT in hedge mode.")
    side: str = Field(description="long or short")
    quantity: Number = Field(description="Signed base units; negative when short.")
    entry_price: Number
    mark_price: Number
    notional_usd: Money = Field(description="Signed: quantity × mark.")
    unrealized_pnl: Money
    realized_pnl: Money
    leverage: int
    margin: Money
    margin_type: str = Field(description="cross or isolated")
    isolated_margin: Money = Field(
        description="Isolated: the margin moved into the position (0 when cross)."
    )
    maintenance_margin: Money
    liquidation_price: Number | None
    updated_at: int


class LeverageSet(StrictInput):
    symbol: str = Field(min_length=1, max_length=30, examples=["BTCUSDT"])
    leverage: int = Field(ge=1, le=125, examples=[10])


class LeverageRead(Schema):
    symbol: str
    leverage: int
    max_notional: Money


class MarginTypeSet(StrictInput):
    symbol: str = Field(min_length=1, max_length=30, examples=["BTCUSDT"])
    margin_type: Literal["cross", "isolated"] = Field(examples=["isolated"])


class MarginTypeRead(Schema):
    symbol: str
    margin_type: str


class PositionMarginChange(StrictInput):
    symbol: str = Field(min_length=1, max_length=30, examples=["BTCUSDT"])
    position_side: Literal["BOTH", "LONG", "SHORT"] | None = Field(
        default=None, description="Hedge mode: LONG or SHORT. Omitted in one-way mode."
    )
    action: Literal["add", "reduce"]
    amount: Decimal = Field(gt=0, le=Decimal(10) ** 12, decimal_places=6, examples=[25])


class PositionMarginRead(Schema):
    symbol: str
    position_side: str
    type: int = Field(description="1 add, 2 reduce (Binance's numbers)")
    amount: Money
    created_at: int


class PositionModeSet(StrictInput):
    hedge: bool = Field(description="true: hedge mode (LONG and SHORT per symbol); false: one-way.")


class PositionModeRead(Schema):
    hedge: bool
