"""Native market data bodies."""

from pydantic import Field

from papertrade.kit.schemas import Number, Schema


class BracketRead(Schema):
    bracket: int
    initial_leverage: int
    notional_floor: Number
    notional_cap: Number
    maint_margin_ratio: Number


class SymbolRead(Schema):
    symbol: str
    base_asset: str
    quote_asset: str
    tick_size: Number
    step_size: Number
    min_qty: Number
    max_qty: Number
    min_notional: Number
    max_leverage: int
    brackets: list[BracketRead]


class QuoteRead(Schema):
    symbol: str
    mark_price: Number
    last_price: Number
    index_price: Number
    funding_rate: Number
    next_funding_time: int
    time: int


class KlineRead(Schema):
    open_time: int
    open: Number
    high: Number
    low: Number
    close: Number
    volume: Number
    close_time: int


class MarketStatus(Schema):
    source: str = Field(description="binance, sim or replay")
    simulated: bool = Field(description="True when prices do not come from Binance")
    connected: bool
    stale: bool = Field(description="True when no fills happen because prices are too old")
    last_update: int | None
    detail: str
    symbols: int
