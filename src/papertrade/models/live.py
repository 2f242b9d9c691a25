"""Live accounts: a user's exchange sub-account that mirrors a paper portfolio (docs/live.md),
and every order the mirror sent or decided not to send."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column, updated_at_column


class LiveAccount(Base):
    __tablename__ = "live_accounts"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    exchange: Mapped[str] = mapped_column(String(20))  # binanceusdm
    label: Mapped[str] = mapped_column(String(100))
    api_key: Mapped[str] = mapped_column(String(128))
    api_secret_encrypted: Mapped[str] = mapped_column(Text)
    withdrawals: Mapped[str] = mapped_column(String(12))  # disabled | not_reported
    # The bound signal source: at most one of a portfolio (its fills), a strategy (the fills of
    # the orders its signals placed) or a webhook token (those of the alerts it received).
    source_portfolio_id: Mapped[int | None] = mapped_column(default=None)
    source_strategy_id: Mapped[int | None] = mapped_column(default=None)
    source_token_id: Mapped[int | None] = mapped_column(default=None)
    sizing: Mapped[str] = mapped_column(String(10))  # ratio | fixed
    sizing_value: Mapped[Decimal] = mapped_column(DecimalType)
    symbols: Mapped[str] = mapped_column(Text, default="[]")  # JSON allow-list; [] = any
    max_position_notional: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    max_daily_loss: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    status: Mapped[str] = mapped_column(String(10))  # active | killed
    kill_reason: Mapped[str] = mapped_column(String(200), default="")
    killed_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    consecutive_errors: Mapped[int] = mapped_column(Integer, default=0)
    day: Mapped[str] = mapped_column(String(10), default="")  # UTC day of day_start_equity
    day_start_equity: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    # Reconciliation counts the orders sent since then (creation, or positions closed by the
    # kill switch): the exchange's positions should be their sum.
    baseline_at: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")
    created_at: Mapped[int] = created_at_column()
    updated_at: Mapped[int] = updated_at_column()


class LiveOrder(Base):
    """One source event mirrored (or skipped) on one live account: at most one exchange order,
    under a client order id derived from the pair, so a retry can never place a second one."""

    __tablename__ = "live_orders"
    __table_args__ = (
        UniqueConstraint("live_account_id", "source_event_id", name="uq_live_orders_source"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    live_account_id: Mapped[int] = mapped_column(
        ForeignKey("live_accounts.id", ondelete="CASCADE"), index=True
    )
    source_event_id: Mapped[int] = mapped_column(BigInteger)
    source_order_id: Mapped[int] = mapped_column(BigInteger)
    client_order_id: Mapped[str] = mapped_column(String(36), unique=True)
    symbol: Mapped[str] = mapped_column(String(30))
    side: Mapped[str] = mapped_column(String(4))
    source_quantity: Mapped[Decimal] = mapped_column(DecimalType)  # the paper fill it mirrors
    source_price: Mapped[Decimal] = mapped_column(DecimalType)
    quantity: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)  # as sent
    reduce_only: Mapped[bool] = mapped_column(default=False)  # the source order closes
    # queued | sent | skipped | rejected | failed
    status: Mapped[str] = mapped_column(String(10))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    exchange_order_id: Mapped[str | None] = mapped_column(String(40), default=None)
    answer: Mapped[str] = mapped_column(Text, default="")  # the exchange's last answer
    created_at: Mapped[int] = created_at_column()
    updated_at: Mapped[int] = updated_at_column()


class LiveReconciliation(Base):
    """One scheduled comparison of the exchange's positions and open orders with the intended
    ones: `ok`, `drift` (what differs, as JSON) or `error` (the exchange could not be asked)."""

    __tablename__ = "live_reconciliations"
    __table_args__ = (Index("ix_live_reconciliations_account_id", "live_account_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    live_account_id: Mapped[int] = mapped_column(ForeignKey("live_accounts.id", ondelete="CASCADE"))
    checked_at: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(10))  # ok | drift | error
    drift: Mapped[str] = mapped_column(Text, default="{}")
    error: Mapped[str] = mapped_column(String(300), default="")
