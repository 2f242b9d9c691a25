"""Telegram: link codes, the binding of an account to a chat, received updates, sent messages."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class TelegramLink(Base):
    """A single-use deep-link code (only its SHA-256 is kept), valid for a few minutes."""

    __tablename__ = "telegram_links"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[int] = created_at_column()
    expires_at: Mapped[int] = mapped_column(BigInteger)
    used_at: Mapped[int | None] = mapped_column(BigInteger, default=None)


class TelegramBinding(Base):
    """One account ↔ one Telegram user (and the private chat the bot talks in)."""

    __tablename__ = "telegram_bindings"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    telegram_user_id: Mapped[int] = mapped_column(BigInteger, unique=True)
    chat_id: Mapped[int] = mapped_column(BigInteger)
    username: Mapped[str] = mapped_column(String(64), default="")
    status: Mapped[str] = mapped_column(String(10), default="active")  # active | inactive
    bound_at: Mapped[int] = created_at_column()
    inactive_since: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # Telegram as a signal source: Cornix-style signals the user posts trade this portfolio,
    # each sized at this percent of its equity (tg/signals.py).
    signal_portfolio_id: Mapped[int | None] = mapped_column(
        ForeignKey("portfolios.id", ondelete="SET NULL"), default=None
    )
    signal_size_percent: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(5))


class TelegramUpdate(Base):
    """A webhook update as received: kept before it is processed; the update_id de-duplicates.
    `chat_id`: the chat it came from (None: it names none, or it came before 0021), so that a
    chat's updates are processed in the order Telegram numbered them (tg/jobs.py)."""

    __tablename__ = "telegram_updates"
    __table_args__ = (
        Index("ix_telegram_updates_chat_waiting", "chat_id", "processed_at", "update_id"),
    )

    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    body: Mapped[str] = mapped_column(Text)
    chat_id: Mapped[int | None] = mapped_column(BigInteger, default=None)
    received_at: Mapped[int] = created_at_column()
    processed_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    outcome: Mapped[str] = mapped_column(String(40), default="")


class TelegramMessage(Base):
    """An outbound message: queued in the transaction that decided on it, sent by the sender
    (tg/sender.py). `notification_id` ties it to the notification it carries: at most one per
    chat."""

    __tablename__ = "telegram_messages"
    __table_args__ = (
        Index("ix_telegram_messages_status_id", "status", "id"),
        UniqueConstraint(
            "notification_id", "chat_id", name="uq_telegram_messages_notification_id_chat_id"
        ),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    chat_id: Mapped[int] = mapped_column(BigInteger)
    user_id: Mapped[int | None] = mapped_column(Integer, default=None)
    notification_id: Mapped[int | None] = mapped_column(Integer, default=None)
    text: Mapped[str] = mapped_column(Text)
    # pending | sending | sent | blocked | failed | interrupted
    status: Mapped[str] = mapped_column(String(12), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str] = mapped_column(String(300), default="")
    created_at: Mapped[int] = created_at_column()
    sent_at: Mapped[int | None] = mapped_column(BigInteger, default=None)


class TelegramChannel(Base):
    """A channel a bound user connected as a signal source: the bot was made an administrator
    there by that user (a `my_chat_member` update), and its posts trade `portfolio_id`."""

    __tablename__ = "telegram_channels"

    chat_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    title: Mapped[str] = mapped_column(String(128), default="")
    portfolio_id: Mapped[int | None] = mapped_column(
        ForeignKey("portfolios.id", ondelete="SET NULL"), default=None
    )
    size_percent: Mapped[Decimal] = mapped_column(DecimalType, default=Decimal(5))
    connected_at: Mapped[int] = created_at_column()
