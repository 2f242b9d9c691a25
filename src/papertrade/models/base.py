"""Column helpers shared by the tables."""

from sqlalchemy import BigInteger
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.kit.time import now_ms


def created_at_column() -> Mapped[int]:
    return mapped_column(BigInteger, default=now_ms, nullable=False)


def updated_at_column() -> Mapped[int]:
    return mapped_column(BigInteger, default=now_ms, onupdate=now_ms, nullable=False)
