"""Stored responses of /v1 writes sent with an Idempotency-Key (kept 24 hours)."""

from sqlalchemy import BigInteger, Integer, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column


class IdempotencyRecord(Base):
    __tablename__ = "idempotency_records"
    __table_args__ = (UniqueConstraint("scope", "key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    scope: Mapped[str] = mapped_column(String(64))  # hash of the credential
    key: Mapped[str] = mapped_column(String(255))
    request_hash: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None] = mapped_column(Integer, default=None)  # None: in flight
    response_body: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    content_type: Mapped[str | None] = mapped_column(String(100), default=None)
    created_at: Mapped[int] = created_at_column()
    expires_at: Mapped[int] = mapped_column(BigInteger, index=True)
