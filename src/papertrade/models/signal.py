"""Inbound alert signals (the portfolio's signal history) and their de-duplication keys."""

from typing import Any

from sqlalchemy import JSON, BigInteger, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.kit.time import now_ms


class Signal(Base):
    """One received alert: the raw body, what it parsed to, the orders it made, the outcome."""

    __tablename__ = "signals"
    __table_args__ = (Index("ix_signals_portfolio_id_id", "portfolio_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(ForeignKey("portfolios.id", ondelete="CASCADE"))
    token_id: Mapped[int | None] = mapped_column(
        ForeignKey("webhook_tokens.id", ondelete="SET NULL"), default=None
    )
    source: Mapped[str] = mapped_column(String(10), default="tv")
    received_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)
    content_type: Mapped[str] = mapped_column(String(100), default="")
    body: Mapped[str] = mapped_column(Text)
    body_format: Mapped[str] = mapped_column(String(10))  # json | text
    parsed: Mapped[Any] = mapped_column(JSON, default=None, nullable=True)
    # executed | ignored | duplicate | rejected | stale | invalid
    status: Mapped[str] = mapped_column(String(12))
    error: Mapped[str | None] = mapped_column(String(40), default=None)
    msg: Mapped[str] = mapped_column(String(1000), default="")
    order_ids: Mapped[Any] = mapped_column(JSON, default=list)
    duplicate_of: Mapped[int | None] = mapped_column(Integer, default=None)
    processed_at: Mapped[int] = mapped_column(BigInteger, default=now_ms)


class SignalDedupe(Base):
    """A signal's de-duplication key, held until `expires_at` (24 hours, or less for bare text)."""

    __tablename__ = "signal_dedupe"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    signal_id: Mapped[int] = mapped_column(Integer)
    expires_at: Mapped[int] = mapped_column(BigInteger, index=True)
