"""Bodies of the account endpoints."""

from decimal import Decimal

from pydantic import Field

from papertrade.kit.schemas import Money, Number, Schema, StrictInput


class EquityRead(Schema):
    portfolio_id: int
    balance: Money = Field(description="Wallet balance: deposits plus realized PnL, fees, funding.")
    unrealized_pnl: Money
    equity: Money
    margin_used: Money = Field(description="Initial margin of positions plus open orders.")
    maintenance_margin: Money
    available: Money
    ledger_balance: Money = Field(description="The balance recomputed from the ledger.")
    time: int


class LedgerRead(Schema):
    id: int
    kind: str
    amount: Money
    balance_after: Money
    symbol: str | None
    order_id: int | None
    note: str
    created_at: int


class FillRead(Schema):
    id: int
    order_id: int
    symbol: str
    side: str
    price: Number
    quantity: Number
    quote_quantity: Money
    commission: Money
    realized_pnl: Money
    liquidity: str
    is_liquidation: bool
    created_at: int


class TopUp(StrictInput):
    amount: Decimal = Field(gt=0, le=Decimal(100_000_000), decimal_places=6, examples=[1000])


class Reset(StrictInput):
    initial_balance: Decimal | None = Field(
        default=None,
        gt=0,
        le=Decimal(100_000_000),
        decimal_places=6,
        description="New starting balance; default: the portfolio's initial balance.",
    )


class SnapshotRead(Schema):
    time: int
    balance: Money
    equity: Money
