"""Paid membership periods and the daily AI quota counters."""

from sqlalchemy import BigInteger, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import updated_at_column


class Membership(Base):
    """A user's paid tier; past `paid_until` the user is on the free tier again."""

    __tablename__ = "memberships"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    tier: Mapped[str] = mapped_column(String(20))
    period_start: Mapped[int] = mapped_column(BigInteger)
    paid_until: Mapped[int] = mapped_column(BigInteger)
    updated_at: Mapped[int] = updated_at_column()


class AiUsage(Base):
    """AI prompts used by one user on one UTC day (the database shares it across processes)."""

    __tablename__ = "ai_usage"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    day: Mapped[int] = mapped_column(Integer, primary_key=True)  # days since 1970-01-01 UTC
    used: Mapped[int] = mapped_column(Integer)
