"""Wallets: a user's USDT credit, apart from portfolios, with a ledger of its own."""

from decimal import Decimal

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column, updated_at_column


class Wallet(Base):
    __tablename__ = "wallets"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), unique=True)
    balance: Mapped[Decimal] = mapped_column(DecimalType)
    created_at: Mapped[int] = created_at_column()
    updated_at: Mapped[int] = updated_at_column()


class WalletEntry(Base):
    """Every change of a wallet's balance; they add up to it (ledger.service.post_wallet)."""

    __tablename__ = "wallet_entries"
    __table_args__ = (Index("ix_wallet_entries_wallet", "wallet_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    wallet_id: Mapped[int] = mapped_column(ForeignKey("wallets.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(20))  # a LedgerKind
    amount: Mapped[Decimal] = mapped_column(DecimalType)  # signed change of the balance
    balance_after: Mapped[Decimal] = mapped_column(DecimalType)
    portfolio_id: Mapped[int | None] = mapped_column(default=None)  # the other side of a transfer
    reference: Mapped[str | None] = mapped_column(String(100), default=None)  # tx id, order id …
    actor: Mapped[str] = mapped_column(String(100), default="")  # who did it: user:7, operator:x
    note: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[int] = created_at_column()
