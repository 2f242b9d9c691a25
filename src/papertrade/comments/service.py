"""Comments: post, list, edit within a window, delete (docs/comments.md). Never commits."""

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.comments.events import CommentPosted
from papertrade.errors import Conflict, NotFound
from papertrade.models import Comment, Portfolio
from papertrade.uow import AsyncWork


def not_found() -> NotFound:
    return NotFound("Comment not found.", code="comment_not_found")


def portfolio_not_found() -> NotFound:
    return NotFound("Portfolio not found.", code="portfolio_not_found")


def can_see(portfolio: Portfolio | None, user_id: int) -> bool:
    return (
        portfolio is not None
        and portfolio.deleted_at is None
        and (portfolio.visibility == "public" or portfolio.user_id == user_id)
    )


async def visible_portfolio(session: AsyncSession, user_id: int, portfolio_id: int) -> Portfolio:
    portfolio = await session.get(Portfolio, portfolio_id)
    if portfolio is None or not can_see(portfolio, user_id):
        raise portfolio_not_found()
    return portfolio


async def post(
    uow: AsyncWork, principal: Principal, portfolio_id: int, text: str, parent_id: int | None
) -> Comment:
    session = uow.session
    portfolio = await visible_portfolio(session, principal.user_id, portfolio_id)
    parent_author = None
    if parent_id is not None:
        parent = await session.get(Comment, parent_id)
        if parent is None or parent.portfolio_id != portfolio.id or parent.deleted_at is not None:
            raise not_found()
        if parent.parent_id is not None:
            raise Conflict(
                "Replies go one level deep: reply to the comment this one answers.",
                code="comment_too_deep",
            )
        parent_author = parent.user_id
    comment = Comment(
        portfolio_id=portfolio.id,
        user_id=principal.user_id,
        parent_id=parent_id,
        text=text,
        created_at=uow.now(),
    )
    session.add(comment)
    await session.flush()
    uow.emit(
        CommentPosted(
            comment_id=comment.id,
            portfolio_id=portfolio.id,
            author_user_id=principal.user_id,
            owner_user_id=portfolio.user_id,
            parent_author_user_id=parent_author,
        )
    )
    return comment


async def thread(
    session: AsyncSession, user_id: int, portfolio_id: int, *, before_id: int | None, limit: int
) -> tuple[Sequence[Comment], dict[int, list[Comment]]]:
    """Top-level comments newest first, and their replies oldest first."""
    await visible_portfolio(session, user_id, portfolio_id)
    statement = select(Comment).where(
        Comment.portfolio_id == portfolio_id, Comment.parent_id.is_(None)
    )
    if before_id is not None:
        statement = statement.where(Comment.id < before_id)
    tops = (await session.scalars(statement.order_by(Comment.id.desc()).limit(limit))).all()
    replies: dict[int, list[Comment]] = {top.id: [] for top in tops}
    if tops:
        rows = await session.scalars(
            select(Comment).where(Comment.parent_id.in_(list(replies))).order_by(Comment.id)
        )
        for reply in rows.all():
            assert reply.parent_id is not None
            replies[reply.parent_id].append(reply)
    return tops, replies


async def _mine_to_change(
    uow: AsyncWork, user_id: int, comment_id: int
) -> tuple[Comment, Portfolio]:
    comment = await uow.session.get(Comment, comment_id, with_for_update=True)
    portfolio = await uow.session.get(Portfolio, comment.portfolio_id) if comment else None
    if comment is None or comment.deleted_at is not None or not can_see(portfolio, user_id):
        raise not_found()
    assert portfolio is not None
    return comment, portfolio


async def edit(uow: AsyncWork, user_id: int, comment_id: int, text: str, window_s: int) -> Comment:
    comment, _ = await _mine_to_change(uow, user_id, comment_id)
    if comment.user_id != user_id:
        raise not_found()
    if uow.now() - comment.created_at > window_s * 1000:
        raise Conflict(
            f"A comment can be edited for {window_s // 60} minutes after it was posted.",
            code="comment_edit_closed",
        )
    comment.text, comment.edited_at = text, uow.now()
    return comment


async def delete(uow: AsyncWork, user_id: int, comment_id: int) -> None:
    """The author, or the portfolio's owner, deletes it; its replies stay under a placeholder."""
    comment, portfolio = await _mine_to_change(uow, user_id, comment_id)
    if user_id not in (comment.user_id, portfolio.user_id):
        raise not_found()
    comment.deleted_at, comment.text = uow.now(), ""
