"""Bodies of the account endpoints."""

from decimal import Decimal

from pydantic import Field

from papertrade.kit.schemas import DecimalText, Money, Number, Schema, StrictInput


class EquityRead(Schema):
    portfolio_id: int
    balance: Money = Field(
        description="Wallet balance: deposits plus realized PnL, fees, funding, less the margin "
        "moved into isolated positions (what the ledger adds up to)."
    )
    isolated_margin: Money = Field(
        default=Decimal(0),
        description="The margin held by open isolated positions (equity counts it).",
    )
    unrealized_pnl: Money
    equity: Money
    margin_used: Money = Field(description="Initial margin of positions plus open orders.")
    maintenance_margin: Money
    available: Money
    ledger_balance: Money = Field(description="The balance recomputed from the ledger.")
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
    position_side: str  # BOTH in one-way mode; LONG or SHORT in hedge mode
    price: Number
    quantity: Number
    quote_quantity: Money
    commission: Money
    realized_pnl: Money
    liquidity: str
    is_liquidation: bool
    # Why this price (null on fills made before these were recorded): "mark" (a taker, at the
    # mark plus its slippage) or "limit" (a resting order at its limit price).
    price_source: str | None = None
    mark_price: Number | None = None
    slippage_bps: Number | None = None  # what the trader paid over the mark, in basis points
    slippage: Money | None = None  # the same in USDT
    fee_rate: DecimalText | None = None
    latency_ms: int | None = None  # the profile's declared latency (not waited; docs/trading.md)
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
    return_pct: Number = Field(
        description="Time-weighted return from the start of this mark's period to it, percent."
    )
    period_start: int = Field(description="When this mark's track-record period began (ms).")
