"""Every change of a portfolio's balance, so equity can be recomputed at any time."""

from decimal import Decimal

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class LedgerEntry(Base):
    __tablename__ = "ledger_entries"
    __table_args__ = (Index("ix_ledger_portfolio", "portfolio_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    # deposit | top_up | reset | realized_pnl | commission | funding | liquidation |
    # isolated_margin (the balance ⇄ an isolated position's margin) | …
    kind: Mapped[str] = mapped_column(String(20))
    amount: Mapped[Decimal] = mapped_column(DecimalType)  # signed change of the balance
    balance_after: Mapped[Decimal] = mapped_column(DecimalType)
    symbol: Mapped[str | None] = mapped_column(String(30), default=None)
    order_id: Mapped[int | None] = mapped_column(default=None)
    fill_id: Mapped[int | None] = mapped_column(default=None)
    note: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[int] = created_at_column()
