"""Executions of orders (what Binance calls trades)."""

from decimal import Decimal

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class Fill(Base):
    __tablename__ = "fills"
    __table_args__ = (Index("ix_fills_portfolio_symbol", "portfolio_id", "symbol", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    order_id: Mapped[int] = mapped_column(ForeignKey("orders.id", ondelete="CASCADE"), index=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    symbol: Mapped[str] = mapped_column(String(30))
    side: Mapped[str] = mapped_column(String(4))
    price: Mapped[Decimal] = mapped_column(DecimalType)
    quantity: Mapped[Decimal] = mapped_column(DecimalType)
    quote_quantity: Mapped[Decimal] = mapped_column(DecimalType)
    commission: Mapped[Decimal] = mapped_column(DecimalType)
    realized_pnl: Mapped[Decimal] = mapped_column(DecimalType)
    liquidity: Mapped[str] = mapped_column(String(5))  # maker | taker
    is_liquidation: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[int] = created_at_column()
