"""Periodic equity marks of each portfolio: the equity curve and drawdown come from these."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, Index
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType


class EquitySnapshot(Base):
    __tablename__ = "equity_snapshots"
    __table_args__ = (Index("ix_equity_portfolio_time", "portfolio_id", "time"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    time: Mapped[int] = mapped_column(BigInteger)
    balance: Mapped[Decimal] = mapped_column(DecimalType)
    equity: Mapped[Decimal] = mapped_column(DecimalType)
