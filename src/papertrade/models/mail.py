"""Email: outbound messages, single-use account tokens, each account's address state, and the
suppression list."""

from sqlalchemy import (
    BigInteger,
    Boolean,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column


class EmailMessage(Base):
    """One outbound email: queued in the transaction that decided on it, sent by mail/sender.py.
    `transactional`: verification and password reset (sent even to a suppressed address, on
    its owner's request; no unsubscribe link). Other mail carries one, and is not sent to a
    suppressed address."""

    __tablename__ = "email_messages"
    __table_args__ = (
        Index("ix_email_messages_status_id", "status", "id"),
        Index("ix_email_messages_user_created", "user_id", "created_at"),
        UniqueConstraint("notification_id", name="uq_email_messages_notification_id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    to_address: Mapped[str] = mapped_column(String(320))
    user_id: Mapped[int | None] = mapped_column(Integer, default=None)
    notification_id: Mapped[int | None] = mapped_column(Integer, default=None)
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    transactional: Mapped[bool] = mapped_column(Boolean, default=False)
    kind: Mapped[str] = mapped_column(String(40), default="")  # the notification kind, if any
    # pending | sending | handover | sent | failed | interrupted | suppressed, or held | digested
    # past the hourly limit (mail/service.py HOURLY_LIMIT); after the provider's
    # events: delayed | delivered | bounced | complained (inbound/providers.py VERDICTS)
    status: Mapped[str] = mapped_column(String(12), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str] = mapped_column(String(300), default="")
    created_at: Mapped[int] = created_at_column()
    sent_at: Mapped[int | None] = mapped_column(BigInteger, default=None)


class AccountToken(Base):
    """A single-use token mailed to the account's address (only its SHA-256 is kept)."""

    __tablename__ = "account_tokens"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    purpose: Mapped[str] = mapped_column(String(20))  # verify_email | reset_password
    email: Mapped[str] = mapped_column(String(320))  # the address it was sent to
    created_at: Mapped[int] = created_at_column()
    expires_at: Mapped[int] = mapped_column(BigInteger)
    used_at: Mapped[int | None] = mapped_column(BigInteger, default=None)


class EmailState(Base):
    """Whether the account's current address was verified (absent: not yet)."""

    __tablename__ = "email_states"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    email: Mapped[str] = mapped_column(String(320))
    verified_at: Mapped[int] = mapped_column(BigInteger)


class EmailSuppression(Base):
    """An address that gets no non-transactional mail (it bounced, complained or unsubscribed
    from everything)."""

    __tablename__ = "email_suppressions"

    address: Mapped[str] = mapped_column(String(320), primary_key=True)
    reason: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[int] = created_at_column()


class EmailDigest(Base):
    """How a user gets notification mail: `instant` (one mail each, the default when absent) or
    `daily` (one digest a day of the unread ones, mail/digest.py)."""

    __tablename__ = "email_digests"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    frequency: Mapped[str] = mapped_column(String(10), default="instant")
    last_sent_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
