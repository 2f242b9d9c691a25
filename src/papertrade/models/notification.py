"""In-app notifications (the inbox) and each user's choice of channels per kind."""

from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column


class Notification(Base):
    """One message in a user's inbox. `event_id` is the outbox event it came from (if any):
    unique per user, so an event can never land twice in one inbox."""

    __tablename__ = "notifications"
    __table_args__ = (
        Index("ix_notifications_user_id_id", "user_id", "id"),
        Index("ix_notifications_created_at", "created_at"),
        UniqueConstraint("user_id", "event_id", name="uq_notifications_user_id_event_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(40))
    title: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(String(4000), default="")
    data: Mapped[Any] = mapped_column(JSON, default=dict)
    portfolio_id: Mapped[int | None] = mapped_column(Integer, default=None)
    event_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    created_at: Mapped[int] = created_at_column()
    read_at: Mapped[int | None] = mapped_column(BigInteger, default=None)


class NotificationPreference(Base):
    """Which channels one kind of notification goes to, for one user (absent: the defaults)."""

    __tablename__ = "notification_preferences"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(40), primary_key=True)
    inbox: Mapped[bool] = mapped_column(Boolean)
    telegram: Mapped[bool] = mapped_column(Boolean)
    email: Mapped[bool] = mapped_column(Boolean)
