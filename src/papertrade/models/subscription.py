"""Signal subscriptions to public portfolios and strategies (docs/subscriptions.md), and the
portfolio owners' prices."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class SubscriptionPrice(Base):
    """What a portfolio's owner charges for 30 days of the paid tier (no row: free only)."""

    __tablename__ = "subscription_prices"

    portfolio_id: Mapped[int] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE"), primary_key=True
    )
    price: Mapped[Decimal] = mapped_column(DecimalType)
    updated_at: Mapped[int] = created_at_column()


class Subscription(Base):
    __tablename__ = "subscriptions"
    __table_args__ = (
        UniqueConstraint(
            "user_id", "portfolio_id", name="uq_subscriptions_user_id_portfolio_id"
        ),  # as 0014_2 made it
        UniqueConstraint("user_id", "strategy_id", name="uq_subscriptions_user_strategy"),
        Index("ix_subscriptions_portfolio", "portfolio_id", "status"),
        Index("ix_subscriptions_strategy", "strategy_id", "status"),
        Index("ix_subscriptions_renewal", "tier", "current_period_end"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    # One of the two: a portfolio's trades, or a strategy's executed signals.
    portfolio_id: Mapped[int | None] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE")
    )
    strategy_id: Mapped[int | None] = mapped_column(
        ForeignKey("strategies.id", ondelete="CASCADE"), default=None
    )
    owner_user_id: Mapped[int] = mapped_column(BigInteger)
    tier: Mapped[str] = mapped_column(String(5))  # free | paid | owner
    status: Mapped[str] = mapped_column(String(9))  # active | past_due | cancelled
    price: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))  # per 30 days
    channels: Mapped[str] = mapped_column(String(100))  # comma-separated
    events: Mapped[str] = mapped_column(String(100))
    symbols: Mapped[str] = mapped_column(String(2000), default="")
    started_at: Mapped[int] = mapped_column(BigInteger)
    current_period_end: Mapped[int | None] = mapped_column(BigInteger, default=None)
    cancel_at_period_end: Mapped[bool] = mapped_column(default=False)
    cancelled_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    paid_total: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(0))
    created_at: Mapped[int] = created_at_column()
