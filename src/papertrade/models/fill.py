"""Executions of orders (what Binance calls trades)."""

from decimal import Decimal

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class Fill(Base):
    __tablename__ = "fills"
    __table_args__ = (
        Index("ix_fills_portfolio_symbol", "portfolio_id", "symbol", "id"),
        Index("ix_fills_portfolio_id", "portfolio_id", "id"),  # a portfolio's fill history
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id", ondelete="CASCADE"), index=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    symbol: Mapped[str] = mapped_column(String(30))
    side: Mapped[str] = mapped_column(String(4))
    # BOTH | LONG | SHORT, its order's; a server default only, so rows can still be written
    # into an older schema (tests of in-place upgrades).
    position_side: Mapped[str] = mapped_column(String(5), server_default="BOTH")
    price: Mapped[Decimal] = mapped_column(DecimalType)
    quantity: Mapped[Decimal] = mapped_column(DecimalType)
    quote_quantity: Mapped[Decimal] = mapped_column(DecimalType)
    commission: Mapped[Decimal] = mapped_column(DecimalType)
    realized_pnl: Mapped[Decimal] = mapped_column(DecimalType)
    liquidity: Mapped[str] = mapped_column(String(5))  # maker | taker
    is_liquidation: Mapped[bool] = mapped_column(default=False)
    # Why this price (NULL on fills from before migration 0015): where the price came from
    # (mark | limit), the mark then, the slippage over it and the commission rate applied.
    price_source: Mapped[str | None] = mapped_column(String(5), default=None)
    mark_price: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    slippage_bps: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    slippage: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)  # USDT paid
    fee_rate: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    latency_ms: Mapped[int | None] = mapped_column(default=None)
    created_at: Mapped[int] = created_at_column()
