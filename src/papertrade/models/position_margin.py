"""A user's adds to and reductions of an isolated position's margin (Binance's
positionMargin/history); the money itself moves through the ledger (kind isolated_margin)."""

from decimal import Decimal

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class PositionMarginChange(Base):
    __tablename__ = "position_margin_changes"
    __table_args__ = (
        Index("ix_position_margin_changes_portfolio", "portfolio_id", "symbol", "created_at"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    symbol: Mapped[str] = mapped_column(String(30))
    position_side: Mapped[str] = mapped_column(String(5))
    type: Mapped[int] = mapped_column()  # 1 add, 2 reduce (Binance's numbers)
    amount: Mapped[Decimal] = mapped_column(DecimalType)
    created_at: Mapped[int] = created_at_column()
