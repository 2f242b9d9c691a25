"""Webhook tokens: the only credential of an inbound alert, carried in the URL path."""

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column


class WebhookToken(Base):
    __tablename__ = "webhook_tokens"

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE"), index=True
    )
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[int] = created_at_column()
    last_used_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
