"""What a user tells about themselves beyond the account: bio, time zone, locale, avatar."""

from sqlalchemy import ForeignKey, LargeBinary, String
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import updated_at_column


class Profile(Base):
    __tablename__ = "profiles"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    bio: Mapped[str] = mapped_column(String(500), default="")
    time_zone: Mapped[str] = mapped_column(String(64), default="UTC")
    locale: Mapped[str] = mapped_column(String(16), default="en")
    avatar: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)  # a PNG we made
    updated_at: Mapped[int] = updated_at_column()
