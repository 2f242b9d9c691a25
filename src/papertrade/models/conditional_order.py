"""Conditional orders (stop, take-profit, trailing stop): they wait for a trigger price, then
place an ordinary order (`actual_order_id`). Their ids come from the orders' id sequence, so an
id names either an order or a conditional order, never both (Binance's older /fapi/v1/order
answers for stop orders with the same orderId)."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column, updated_at_column


class ConditionalOrder(Base):
    __tablename__ = "conditional_orders"
    __table_args__ = (
        UniqueConstraint("portfolio_id", "client_algo_id"),
        Index("ix_conditional_orders_portfolio_open", "portfolio_id", "is_open"),
        Index("ix_conditional_orders_open", "is_open"),
    )

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    symbol: Mapped[str] = mapped_column(String(30))
    side: Mapped[str] = mapped_column(String(4))  # buy | sell
    position_side: Mapped[str] = mapped_column(String(5), default="BOTH", server_default="BOTH")
    type: Mapped[str] = mapped_column(String(24))  # trading.conditional.ConditionalType
    working_type: Mapped[str] = mapped_column(String(16))  # MARK_PRICE | CONTRACT_PRICE
    trigger_price: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    price: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)  # STOP, TAKE_PROFIT
    quantity: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)  # None: close all
    close_position: Mapped[bool] = mapped_column(default=False)
    reduce_only: Mapped[bool] = mapped_column(default=False)
    price_protect: Mapped[bool] = mapped_column(default=False)
    callback_rate: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)  # percent
    activation_price: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    # A trailing stop's best price since activation (the engine saves it as it moves).
    trailing_extreme: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    time_in_force: Mapped[str] = mapped_column(String(3), default="GTC")
    status: Mapped[str] = mapped_column(String(12))
    is_open: Mapped[bool] = mapped_column(default=True)
    client_algo_id: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(20), default="v1")
    actual_order_id: Mapped[int | None] = mapped_column(BigInteger, default=None, index=True)
    # The entry order it protects, when it was attached to one (conditional/commands.py).
    origin_order_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    reason: Mapped[str | None] = mapped_column(String(200), default=None)
    created_at: Mapped[int] = created_at_column()
    updated_at: Mapped[int] = updated_at_column()
    triggered_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
