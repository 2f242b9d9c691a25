"""Bodies of positions and leverage endpoints."""

from pydantic import Field

from papertrade.kit.schemas import Money, Number, Schema, StrictInput


class PositionRead(Schema):
    symbol: str
    side: str = Field(description="long or short")
    quantity: Number = Field(description="Signed base units; negative when short.")
    entry_price: Number
    mark_price: Number
    notional_usd: Money = Field(description="Signed: quantity × mark.")
    unrealized_pnl: Money
    realized_pnl: Money
    leverage: int
    margin: Money
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
