"""A position per portfolio, symbol and position side: BOTH in one-way mode (a net, signed
quantity), LONG and SHORT in hedge mode. The row also keeps the symbol's leverage and margin type
and, when isolated, the margin moved into the position (its isolated wallet)."""

from decimal import Decimal

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import updated_at_column


class Position(Base):
    __tablename__ = "positions"
    __table_args__ = (UniqueConstraint("portfolio_id", "symbol", "position_side"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    symbol: Mapped[str] = mapped_column(String(30))
    # BOTH | LONG | SHORT; a LONG row's quantity is never negative, a SHORT row's never positive.
    position_side: Mapped[str] = mapped_column(String(5), default="BOTH", server_default="BOTH")
    quantity: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))  # negative = short
    entry_price: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    leverage: Mapped[int] = mapped_column(default=20)
    margin_type: Mapped[str] = mapped_column(String(8), default="cross", server_default="cross")
    # Isolated margin: moved out of the balance (ledger kind isolated_margin) while it is open.
    isolated_margin: Mapped[Decimal] = mapped_column(
        DecimalType, default=Decimal(0), server_default="0"
    )
    realized_pnl: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    updated_at: Mapped[int] = updated_at_column()
