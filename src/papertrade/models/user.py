"""Users and their server-side web sessions."""

from sqlalchemy import BigInteger, ForeignKey, Index, String, func
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column, updated_at_column


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(primary_key=True)
    # Kept in lower case (users/service.py normalise_email); the index below holds it so.
    email: Mapped[str] = mapped_column(String(320), unique=True)
    password_hash: Mapped[str] = mapped_column(String(256))
    display_name: Mapped[str] = mapped_column(String(80), default="")
    tier: Mapped[str] = mapped_column(String(20), default="free")
    created_at: Mapped[int] = created_at_column()
    updated_at: Mapped[int] = updated_at_column()


Index("uq_users_email_lower", func.lower(User.email), unique=True)  # migration 0005


class UserSession(Base):
    """A signed-in browser; the cookie carries a random token whose hash is the key here."""

    __tablename__ = "user_sessions"

    id: Mapped[int] = mapped_column(primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[int] = created_at_column()
    expires_at: Mapped[int] = mapped_column(BigInteger)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    # The browser family, system and network it signed in from, as a keyed hash (users/devices.py):
    # enough to tell a device seen before, nothing to learn the address or the browser from.
    device_hash: Mapped[str | None] = mapped_column(String(64), default=None)
