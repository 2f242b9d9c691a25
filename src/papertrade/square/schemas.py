"""Bodies of the public square."""

from pydantic import Field

from papertrade.kit.schemas import Money, Number, Schema


class PublicPortfolio(Schema):
    code: str
    name: str
    description: str
    equity: Money
    initial_balance: Money
    return_pct: Number = Field(description="Equity against net deposits, in percent.")
    max_drawdown_pct: Number
    trades: int
    win_rate: Number | None = Field(description="Share of closing fills in profit (0–1).")
    created_at: int


class SquarePage(Schema):
    items: list[PublicPortfolio]
    total: int
    offset: int
    limit: int


class PublicPoint(Schema):
    time: int
    equity: Money


class PublicPosition(Schema):
    symbol: str
    side: str = Field(description="long or short")
    quantity: Number = Field(description="Base units, positive.")
    entry_price: Number
    mark_price: Number
    leverage: int
    unrealized_pnl: Money
    roe_pct: Number = Field(description="Unrealized PnL against the position's margin, percent.")
