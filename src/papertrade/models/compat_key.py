"""Binance-compatible key pairs, each bound to one portfolio."""

from sqlalchemy import BigInteger, ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column


class CompatKey(Base):
    __tablename__ = "compat_keys"

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE"), index=True
    )
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    # HMAC verification needs the secret itself, so it is encrypted (Fernet) rather than hashed.
    secret_encrypted: Mapped[str] = mapped_column(Text)
    note: Mapped[str] = mapped_column(String(200), default="")
    created_at: Mapped[int] = created_at_column()
    last_used_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
