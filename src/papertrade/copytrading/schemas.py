"""Bodies of /v1/copy/*."""

from decimal import Decimal
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from papertrade.kit.ids import Id
from papertrade.kit.schemas import Money, Number, Schema, StrictInput
from papertrade.models.portfolio import id_from_code

Mode = Literal["fixed_amount", "fixed_ratio", "multiplier"]


class RelationCreate(StrictInput):
    leader_portfolio_id: Id = Field(
        description='The public portfolio to copy: its id, or its code ("P0000012").'
    )
    portfolio_id: Id = Field(description="One of my portfolios, where the copies go.")
    mode: Mode
    allocation: Decimal = Field(
        ge=10, le=200_000, decimal_places=6, description="USDT put behind this copy."
    )
    amount: Decimal | None = Field(
        default=None,
        gt=0,
        le=200_000,
        decimal_places=6,
        description="fixed_amount: margin per copied order.",
    )
    multiplier: Decimal | None = Field(default=None, ge=Decimal("0.1"), le=10, decimal_places=4)
    leverage: int | Literal["follow"] = Field(
        default="follow", description='"follow" the leader, or a fixed leverage 1-125.'
    )
    max_order_margin: Decimal | None = Field(default=None, gt=0, le=200_000, decimal_places=6)
    stop_pct: Decimal | None = Field(
        default=None,
        gt=0,
        lt=100,
        decimal_places=4,
        description="Portfolio stop: end the copy at this % loss.",
    )
    slippage_pct: Decimal | None = Field(
        default=None,
        gt=0,
        le=Decimal("1.5"),
        decimal_places=4,
        description="Lower the slippage cap on opens.",
    )
    symbols: list[str] = Field(default_factory=list, max_length=50)

    @field_validator("leader_portfolio_id", mode="before")
    @classmethod
    def _code_or_id(cls, value: Any) -> Any:
        """A portfolio's code (as its pages show it) names it as well as its id."""
        if isinstance(value, str) and value[:1] in "Pp":
            found = id_from_code(value.strip())
            if found is None:
                raise ValueError("a portfolio code is P followed by digits, like P0000012")
            return found
        return value

    @model_validator(mode="after")
    def _mode_needs(self) -> "RelationCreate":
        if self.mode == "fixed_amount" and self.amount is None:
            raise ValueError("mode fixed_amount needs amount (margin per copied order)")
        if self.mode == "multiplier" and self.multiplier is None:
            raise ValueError("mode multiplier needs multiplier (0.1 to 10)")
        if isinstance(self.leverage, int) and not 1 <= self.leverage <= 125:
            raise ValueError("leverage is 'follow' or a whole number from 1 to 125")
        if any(not (0 < len(s) <= 30 and s.isascii() and s.isalnum()) for s in self.symbols):
            raise ValueError("symbols are names like BTCUSDT")
        return self


class Unfollow(StrictInput):
    close_positions: bool = True


class LeaderTerms(StrictInput):
    profit_share_pct: Decimal | None = Field(
        default=None, ge=0, le=30, decimal_places=4, description="Unchanged when left out."
    )
    payout_portfolio_id: Id | None = Field(
        default=None,
        description="One of my portfolios that receives the profit shares (paper money, through "
        "the ledger; never the wallet). Unchanged when left out; at first this portfolio itself.",
    )


class LeaderRead(Schema):
    portfolio_id: int
    profit_share_pct: Number
    followers: int


class LeaderTermsRead(LeaderRead):
    payout_portfolio_id: int = Field(description="The portfolio that receives profit shares.")


class LeaderStatsRead(LeaderRead):
    followers_pnl: Money = Field(description="Net PnL of every copy of this portfolio, USDT.")
    aum: Money = Field(description="Allocation of the live copies, USDT.")
    roi_7d_pct: Number | None = Field(description="None until the portfolio is 7 days old.")
    roi_30d_pct: Number | None
    roi_90d_pct: Number | None
    max_drawdown_pct: Number
    win_rate: Number | None = Field(
        description="Share of closing fills with a profit after their fee."
    )


class RelationRead(Schema):
    id: int
    role: str = Field(description="follower (my copy) or leader (a copy of my portfolio)")
    leader_portfolio_id: int
    leader_portfolio_code: str = Field(description="The copied portfolio's code (P0000012).")
    leader_portfolio_name: str | None = Field(
        description="The copied portfolio's name (null once deleted)."
    )
    portfolio_id: int
    portfolio_code: str = Field(description="The code of the portfolio the copies go into.")
    portfolio_name: str | None = Field(
        description="Its name, for the follower only (null for the leader, and once deleted)."
    )
    mode: str
    allocation: Money
    amount: Money | None
    multiplier: Number | None
    leverage: int | str
    max_order_margin: Money | None
    stop_pct: Number | None
    slippage_pct: Number | None
    symbols: list[str]
    profit_share_pct: Number
    status: str
    cum_net_pnl: Money
    hwm: Money
    fees_paid: Money
    end_reason: str | None
    created_at: int
    ended_at: int | None


class CopyTradeRead(Schema):
    id: int
    relation_id: int
    leader_order_id: int
    leg: str
    symbol: str
    side: str
    leader_price: Number
    leader_quantity: Number
    status: str
    reason: str | None
    detail: str
    follower_order_id: int | None
    quantity: Number
    price: Number | None
    realized_pnl: Money
    commission: Money
    created_at: int


class SettlementRead(Schema):
    id: int
    relation_id: int
    leader_user_id: int
    follower_user_id: int
    reason: str
    net_pnl: Money
    hwm_before: Money
    hwm_after: Money
    pct: Number
    fee: Money
    payout_portfolio_id: int | None = Field(
        description="The leader's portfolio the fee went to (shown to the leader; null to the "
        "follower, and on settlements from before profit shares were paper)."
    )
    created_at: int
