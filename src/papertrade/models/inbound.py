"""Inbound third-party webhooks (other than tv and tg): each source a user set up, and every
event received, kept raw with its outcome."""

from decimal import Decimal

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.dbtypes import DecimalType
from papertrade.models.base import created_at_column


class InboundSource(Base):
    """A source a user connected (a Finnhub webhook): its secret is kept as a SHA-256 only."""

    __tablename__ = "inbound_sources"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    provider: Mapped[str] = mapped_column(String(20))
    secret_hash: Mapped[str] = mapped_column(String(64))
    note: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[int] = created_at_column()
    revoked_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # Optional: each alert also trades this portfolio (inbound/signals.py), sized at
    # this percent of its equity. Checked for ownership when set and again at each alert.
    signal_portfolio_id: Mapped[int | None] = mapped_column(Integer, default=None)
    signal_size_percent: Mapped[Decimal | None] = mapped_column(DecimalType, default=None)
    signal_action: Mapped[str | None] = mapped_column(String(10), default=None)  # buy|sell|close


class InboundEvent(Base):
    """One received event: stored (raw body) before it is processed; (provider, event_id) is
    unique, so a re-delivery is recognised and never processed twice."""

    __tablename__ = "inbound_events"
    __table_args__ = (
        UniqueConstraint("provider", "event_id", name="uq_inbound_events_provider_event_id"),
        Index("ix_inbound_events_source_id_id", "source_id", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    provider: Mapped[str] = mapped_column(String(20))
    source_id: Mapped[int | None] = mapped_column(Integer, default=None)
    user_id: Mapped[int | None] = mapped_column(Integer, default=None)
    event_id: Mapped[str] = mapped_column(String(200))
    type: Mapped[str] = mapped_column(String(60), default="")
    body: Mapped[str] = mapped_column(Text)
    received_at: Mapped[int] = created_at_column()
    processed_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    outcome: Mapped[str] = mapped_column(String(300), default="")
