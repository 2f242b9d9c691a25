"""Orders of every surface (native, compatible, webhook, web)."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column, updated_at_column


class Order(Base):
    __tablename__ = "orders"
    # Columns with only a server default are not read back after an insert (no RETURNING of
    # them), so rows can still be written through this model into an older schema (tests of
    # in-place upgrades); code that needs such a column after creating a row sets it.
    __mapper_args__ = {"eager_defaults": False}  # noqa: RUF012 (SQLAlchemy reads it)
    __table_args__ = (
        UniqueConstraint("portfolio_id", "client_order_id"),
        Index("ix_orders_portfolio_open", "portfolio_id", "is_open"),
        Index("ix_orders_open", "is_open"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    symbol: Mapped[str] = mapped_column(String(30))
    side: Mapped[str] = mapped_column(String(4))  # buy | sell
    type: Mapped[str] = mapped_column(String(10))  # market | limit
    action: Mapped[str] = mapped_column(String(5))  # open | close (reduce-only)
    # BOTH | LONG | SHORT; a server default only, as the other columns an older release lacked.
    position_side: Mapped[str] = mapped_column(String(5), server_default="BOTH")
    time_in_force: Mapped[str] = mapped_column(String(3), default="GTC")
    status: Mapped[str] = mapped_column(String(20))
    is_open: Mapped[bool] = mapped_column(default=False)  # resting in the book
    quantity: Mapped[Decimal] = mapped_column(DecimalType)
    size_usd: Mapped[Decimal] = mapped_column(DecimalType)
    price: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    avg_price: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    filled_quantity: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    filled_quote: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    commission: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    realized_pnl: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    reserved_margin: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    client_order_id: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(20), default="v1")  # v1 fapi web webhook liquidation
    reject_reason: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[int] = created_at_column()
    updated_at: Mapped[int] = updated_at_column()
    filled_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
