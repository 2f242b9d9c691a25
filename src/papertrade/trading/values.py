"""Plain value types the kernel, the market feeds and the services share."""

from dataclasses import dataclass, field
from decimal import Decimal


@dataclass(frozen=True, slots=True)
class Bracket:
    """One leverage/maintenance bracket of an instrument (Binance's leverageBracket row)."""

    bracket: int
    initial_leverage: int
    notional_floor: Decimal
    notional_cap: Decimal
    maint_margin_ratio: Decimal
    cum: Decimal  # maintenance amount: maint = notional * ratio - cum


@dataclass(frozen=True, slots=True)
class Instrument:
    """A USDT-margined perpetual contract and its trading filters."""

    symbol: str
    base_asset: str
    quote_asset: str
    tick_size: Decimal
    step_size: Decimal
    min_qty: Decimal
    max_qty: Decimal
    market_max_qty: Decimal
    min_notional: Decimal
    min_price: Decimal
    max_price: Decimal
    price_precision: int
    quantity_precision: int
    brackets: tuple[Bracket, ...]
    onboard_date: int = 1569398400000  # ms

    @property
    def max_leverage(self) -> int:
        return self.brackets[0].initial_leverage if self.brackets else 20

    def bracket_for(self, notional: Decimal) -> Bracket:
        """The maintenance bracket that applies to an absolute notional."""
        for row in self.brackets:
            if notional < row.notional_cap:
                return row
        return self.brackets[-1]


@dataclass(frozen=True, slots=True)
class Quote:
    """Latest prices for one symbol, as the market feed publishes them."""

    symbol: str
    mark_price: Decimal
    last_price: Decimal
    index_price: Decimal
    funding_rate: Decimal
    next_funding_time: int  # ms
    time: int  # ms when this quote was produced


@dataclass(frozen=True, slots=True)
class Kline:
    """One candle. Times are ms; open_time is inclusive, close_time = next open - 1."""

    open_time: int
    open: Decimal
    high: Decimal
    low: Decimal
    close: Decimal
    volume: Decimal
    close_time: int
    quote_volume: Decimal = Decimal(0)
    trades: int = 0
    taker_buy_volume: Decimal = Decimal(0)
    taker_buy_quote_volume: Decimal = Decimal(0)


@dataclass(frozen=True, slots=True)
class Ticker24h:
    """Rolling 24-hour statistics for one symbol."""

    symbol: str
    open_price: Decimal
    high_price: Decimal
    low_price: Decimal
    last_price: Decimal
    volume: Decimal
    quote_volume: Decimal
    open_time: int
    close_time: int
    count: int = 0
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FundingRecord:
    """A settled funding event (Binance's fundingRate row)."""

    symbol: str
    funding_rate: Decimal
    funding_time: int
    mark_price: Decimal
