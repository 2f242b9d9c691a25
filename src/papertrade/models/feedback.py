"""In-product feedback and the operators' answers."""

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String, Text
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


class FeedbackScreenshot(Base):
    """The screenshot attached to a feedback message: a PNG we made from the upload (nothing the
    user sent is kept or served as is), apart from the feedback row so listings never load it."""

    __tablename__ = "feedback_screenshots"

    feedback_id: Mapped[int] = mapped_column(
        ForeignKey("feedback.id", ondelete="CASCADE"), primary_key=True
    )
    png: Mapped[bytes] = mapped_column(LargeBinary)
    width: Mapped[int] = mapped_column(Integer)
    height: Mapped[int] = mapped_column(Integer)
    sent_format: Mapped[str] = mapped_column(String(10))  # what the bytes were: PNG, JPEG, WEBP
    created_at: Mapped[int] = created_at_column()
