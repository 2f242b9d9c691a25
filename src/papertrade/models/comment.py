"""Comments on public portfolios and strategies, one level of replies (docs/comments.md)."""

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, Text
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column

# A comment is on exactly one thing: a portfolio or a strategy.
ONE_TARGET = "(portfolio_id IS NULL) <> (strategy_id IS NULL)"


class Comment(Base):
    __tablename__ = "comments"
    __table_args__ = (
        Index("ix_comments_portfolio", "portfolio_id", "parent_id", "id"),
        Index("ix_comments_strategy", "strategy_id", "parent_id", "id"),
        Index("ix_comments_parent", "parent_id", "id"),
        CheckConstraint(ONE_TARGET, name="one_target"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    portfolio_id: Mapped[int | None] = mapped_column(
        ForeignKey("portfolios.id", ondelete="CASCADE"), default=None
    )
    strategy_id: Mapped[int | None] = mapped_column(
        ForeignKey("strategies.id", ondelete="CASCADE"), default=None
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("comments.id", ondelete="CASCADE"), default=None
    )
    text: Mapped[str] = mapped_column(Text)  # as the author wrote it; rendered escaped
    created_at: Mapped[int] = created_at_column()
    edited_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    deleted_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
