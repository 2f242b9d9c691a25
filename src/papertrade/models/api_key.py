"""Native API keys (Authorization: Bearer on /v1 and the WebSocket)."""

from sqlalchemy import BigInteger, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column


class ApiKey(Base):
    __tablename__ = "api_keys"

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    note: Mapped[str] = mapped_column(String(200), default="")
    scope: Mapped[str] = mapped_column(String(8))  # read | write
    created_at: Mapped[int] = created_at_column()
    last_used_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    revoked_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
