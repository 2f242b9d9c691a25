"""Bodies of the public square."""

from pydantic import Field

from papertrade.kit.schemas import Money, Number, Schema


class PublicPortfolio(Schema):
    code: str
    name: str
    description: str
    equity: Money
    initial_balance: Money
    return_pct: Number = Field(
        description="Time-weighted return of the current period (since the latest reset), in "
        "percent: top-ups, transfers and profit shares are cash flows, not gains or losses "
        "(docs/trading.md, Returns)."
    )
    max_drawdown_pct: Number = Field(
        description="Largest fall of the time-weighted index from its peak in the current "
        "period, in percent (positive)."
    )
    period_start: int = Field(
        description="When the current track-record period began: the latest reset, else the "
        "portfolio's creation (ms)."
    )
    trades: int
    win_rate: Number | None = Field(
        description="Share of closing fills in profit after their fee (0–1)."
    )
    created_at: int


class SquarePage(Schema):
    items: list[PublicPortfolio]
    total: int
    offset: int
    limit: int


class PublicPoint(Schema):
    time: int
    equity: Money
    return_pct: Number = Field(
        description="Time-weighted return from the start of this point's period to it, percent."
    )
    period_start: int = Field(description="When this point's track-record period began (ms).")


class PublicPosition(Schema):
    symbol: str
    side: str = Field(description="long or short")
    quantity: Number = Field(description="Base units, positive.")
    entry_price: Number
    mark_price: Number
    leverage: int
    unrealized_pnl: Money
    roe_pct: Number = Field(description="Unrealized PnL against the position's margin, percent.")
