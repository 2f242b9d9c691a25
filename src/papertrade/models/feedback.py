"""In-product feedback and the operators' answers."""

from sqlalchemy import BigInteger, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column


class Feedback(Base):
    __tablename__ = "feedback"
    __table_args__ = (Index("ix_feedback_user", "user_id", "id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    category: Mapped[str] = mapped_column(String(20))  # bug | idea | question | other
    text: Mapped[str] = mapped_column(Text)
    page: Mapped[str] = mapped_column(String(300), default="")
    app_version: Mapped[str] = mapped_column(String(50), default="")
    status: Mapped[str] = mapped_column(String(12), index=True)  # open | answered
    answer: Mapped[str | None] = mapped_column(Text, default=None)
    answered_by: Mapped[str | None] = mapped_column(String(100), default=None)
    answered_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    created_at: Mapped[int] = created_at_column()
