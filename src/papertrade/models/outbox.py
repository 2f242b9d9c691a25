"""The durable outbox: events other areas must not miss, and how far each consumer has read."""

from sqlalchemy import BigInteger, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base


class OutboxEvent(Base):
    """A committed domain event, written in the transaction of the change that caused it."""

    __tablename__ = "outbox_events"
    __table_args__ = (Index("ix_outbox_events_portfolio_id_id", "portfolio_id", "id"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True
    )
    type: Mapped[str] = mapped_column(String(60))
    portfolio_id: Mapped[int | None] = mapped_column(default=None)
    time: Mapped[int] = mapped_column(BigInteger)
    data: Mapped[str] = mapped_column(Text)  # JSON; decimals as strings


class OutboxCursor(Base):
    """The id of the last outbox event a consumer has handled, moved in the same transaction as
    the consumer's effects: a restart resumes after it, and nothing is handled twice."""

    __tablename__ = "outbox_cursors"

    consumer: Mapped[str] = mapped_column(String(60), primary_key=True)
    last_id: Mapped[int] = mapped_column(BigInteger, default=0)
