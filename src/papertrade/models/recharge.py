"""USDT-TRC20 recharge orders and the transfers the watcher saw on chain."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class RechargeOrder(Base):
    __tablename__ = "recharge_orders"
    __table_args__ = (Index("ix_recharge_orders_user", "user_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    amount: Mapped[Decimal] = mapped_column(DecimalType)  # what the user asked for
    pay_amount: Mapped[Decimal] = mapped_column(DecimalType)  # amount + k × 0.01, what to send
    address: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(12), index=True)  # pending|paid|expired|…
    # "<address>:<pay_amount>" while pending, else NULL: the unique index keeps two pending
    # orders from sharing an amount on one address, even when created at the same instant.
    pending_key: Mapped[str | None] = mapped_column(String(100), unique=True, default=None)
    created_at: Mapped[int] = created_at_column()
    expires_at: Mapped[int] = mapped_column(BigInteger)
    paid_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    tx_id: Mapped[str | None] = mapped_column(String(80), unique=True, default=None)


class TronTransfer(Base):
    """A USDT transfer to one of our addresses, kept whether or not it matched an order."""

    __tablename__ = "tron_transfers"

    id: Mapped[int] = mapped_column(primary_key=True)
    tx_id: Mapped[str] = mapped_column(String(80), unique=True)  # credits at most once
    from_address: Mapped[str] = mapped_column(String(64))
    to_address: Mapped[str] = mapped_column(String(64))
    value: Mapped[int] = mapped_column(BigInteger)  # micro-USDT, as TronGrid gives it
    block_timestamp: Mapped[int] = mapped_column(BigInteger)
    # seen (not yet judged) | credited | unmatched | resolved (by an operator)
    status: Mapped[str] = mapped_column(String(12), index=True)
    order_id: Mapped[int | None] = mapped_column(
        ForeignKey("recharge_orders.id", ondelete="SET NULL"), default=None
    )
    resolved_by: Mapped[str | None] = mapped_column(String(100), default=None)
    note: Mapped[str] = mapped_column(String(200), default="")
    seen_at: Mapped[int] = created_at_column()
