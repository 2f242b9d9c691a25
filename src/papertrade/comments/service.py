"""Comments: post, list, edit within a window, delete (docs/comments.md). Never commits.

A comment is on a portfolio or on a strategy; both follow the same rules, told apart only by
the Target the comment names."""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.comments.events import CommentDeleted, CommentPosted
from papertrade.errors import Conflict, NotFound
from papertrade.models import Comment, Portfolio, Strategy, User
from papertrade.profiles.names import public_name
from papertrade.uow import AsyncWork


@dataclass(frozen=True, slots=True)
class Target:
    """What a thread hangs on: exactly one of portfolio_id and strategy_id, and its owner."""

    portfolio_id: int | None
    strategy_id: int | None
    owner_user_id: int = 0
    name: str = ""  # the portfolio's or strategy's, once looked up

    def holds(self, comment: Comment) -> bool:
        return (comment.portfolio_id, comment.strategy_id) == (self.portfolio_id, self.strategy_id)


def not_found() -> NotFound:
    return NotFound("Comment not found.", code="comment_not_found")


def target_not_found(target: Target) -> NotFound:
    if target.strategy_id is not None:
        return NotFound("Strategy not found.", code="strategy_not_found")
    return NotFound("Portfolio not found.", code="portfolio_not_found")


def can_see(thing: Portfolio | Strategy | None, user_id: int | None) -> bool:
    """Public ones for anyone (`user_id` None: signed out); a private one for its owner only."""
    return (
        thing is not None
        and thing.deleted_at is None
        and (thing.visibility == "public" or thing.user_id == user_id)
    )


async def visible_target(session: AsyncSession, user_id: int | None, target: Target) -> Target:
    """The target with its owner, or the target's 404 when the caller may not see it."""
    thing: Portfolio | Strategy | None
    if target.strategy_id is not None:
        thing = await session.get(Strategy, target.strategy_id)
    else:
        thing = await session.get(Portfolio, target.portfolio_id)
    if thing is None or not can_see(thing, user_id):
        raise target_not_found(target)
    return Target(target.portfolio_id, target.strategy_id, thing.user_id, thing.name)


async def post(
    uow: AsyncWork, principal: Principal, target: Target, text: str, parent_id: int | None
) -> Comment:
    session = uow.session
    target = await visible_target(session, principal.user_id, target)
    parent_author = None
    if parent_id is not None:
        parent = await session.get(Comment, parent_id)
        if parent is None or not target.holds(parent) or parent.deleted_at is not None:
            raise not_found()
        if parent.parent_id is not None:
            raise Conflict(
                "Replies go one level deep: reply to the comment this one answers.",
                code="comment_too_deep",
            )
        parent_author = parent.user_id
    comment = Comment(
        portfolio_id=target.portfolio_id,
        strategy_id=target.strategy_id,
        user_id=principal.user_id,
        parent_id=parent_id,
        text=text,
        created_at=uow.now(),
    )
    session.add(comment)
    await session.flush()
    author = await session.get(User, principal.user_id)
    uow.emit(
        CommentPosted(
            comment_id=comment.id,
            portfolio_id=target.portfolio_id,
            strategy_id=target.strategy_id,
            author_user_id=principal.user_id,
            owner_user_id=target.owner_user_id,
            parent_author_user_id=parent_author,
            author_name=public_name(author) if author is not None else "",
            target_name=target.name,
        )
    )
    return comment


async def thread(
    session: AsyncSession,
    user_id: int | None,
    target: Target,
    *,
    before_id: int | None,
    limit: int,
) -> tuple[Sequence[Comment], dict[int, list[Comment]]]:
    """Top-level comments newest first, and their replies oldest first."""
    await visible_target(session, user_id, target)
    on_target = (
        Comment.strategy_id == target.strategy_id
        if target.strategy_id is not None
        else Comment.portfolio_id == target.portfolio_id
    )
    statement = select(Comment).where(on_target, Comment.parent_id.is_(None))
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


async def _mine_to_change(uow: AsyncWork, user_id: int, comment_id: int) -> tuple[Comment, int]:
    """The comment (locked) and the user_id of its target's owner; 404 when not visible."""
    comment = await uow.session.get(Comment, comment_id, with_for_update=True)
    if comment is None or comment.deleted_at is not None:
        raise not_found()
    try:
        target = await visible_target(
            uow.session, user_id, Target(comment.portfolio_id, comment.strategy_id)
        )
    except NotFound:
        raise not_found() from None
    return comment, target.owner_user_id


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
    """The author, or the owner of the portfolio or strategy, deletes it; its replies stay
    under a placeholder."""
    comment, owner_user_id = await _mine_to_change(uow, user_id, comment_id)
    if user_id not in (comment.user_id, owner_user_id):
        raise not_found()
    comment.deleted_at, comment.text = uow.now(), ""
    uow.emit(
        CommentDeleted(
            comment_id=comment.id,
            portfolio_id=comment.portfolio_id,
            strategy_id=comment.strategy_id,
            author_user_id=comment.user_id,
            owner_user_id=owner_user_id,
            deleted_by_user_id=user_id,
        )
    )


async def remove_all_by(uow: AsyncWork, user_id: int) -> None:
    """A deleted account's comments become placeholders, as if its author had deleted each one:
    the words go, the threads (and others' replies) stay."""
    await uow.session.execute(
        update(Comment)
        .where(Comment.user_id == user_id, Comment.deleted_at.is_(None))
        .values(deleted_at=uow.now(), text="")
    )


async def author_names(session: AsyncSession, comments: Sequence[Comment]) -> dict[int, str]:
    """The public names of the comments' authors (never an address)."""
    ids = {comment.user_id for comment in comments}
    if not ids:
        return {}
    users = await session.scalars(select(User).where(User.id.in_(ids)))
    return {user.id: public_name(user) for user in users.all()}
