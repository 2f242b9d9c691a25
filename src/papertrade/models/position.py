"""One net position per portfolio and symbol (one-way mode); the row also keeps the leverage."""

from decimal import Decimal

from sqlalchemy import ForeignKey, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import updated_at_column


class Position(Base):
    __tablename__ = "positions"
    __table_args__ = (UniqueConstraint("portfolio_id", "symbol"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    symbol: Mapped[str] = mapped_column(String(30))
    quantity: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))  # negative = short
    entry_price: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    leverage: Mapped[int] = mapped_column(default=20)
    realized_pnl: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    updated_at: Mapped[int] = updated_at_column()
