"""/v1/comments: comments on public portfolios and strategies."""

from collections.abc import Mapping
from typing import Annotated

from fastapi import APIRouter, Query

from papertrade.auth.v1 import Ctx, MaybeCaller, Writer
from papertrade.comments import service
from papertrade.comments.schemas import ONE_TARGET, CommentCreate, CommentEdit, CommentRead
from papertrade.comments.service import Target
from papertrade.errors import RateLimited, ValidationFailed
from papertrade.kit.ids import Id
from papertrade.kit.schemas import Ok
from papertrade.models import Comment

router = APIRouter(tags=["comments"])
Limit = Annotated[int, Query(ge=1, le=100)]
HOUR_S = 3600


def render(
    comment: Comment, names: Mapping[int, str], replies: list[Comment] | None = None
) -> CommentRead:
    return CommentRead(
        id=comment.id,
        portfolio_id=comment.portfolio_id,
        strategy_id=comment.strategy_id,
        user_id=comment.user_id,
        author_name=names.get(comment.user_id, ""),
        parent_id=comment.parent_id,
        text=comment.text,
        deleted=comment.deleted_at is not None,
        created_at=comment.created_at,
        edited_at=comment.edited_at,
        replies=[render(reply, names) for reply in replies or []],
    )


@router.post("/comments", status_code=201, response_model=CommentRead)
async def create(body: CommentCreate, principal: Writer, ctx: Ctx) -> CommentRead:
    """Comment on a public portfolio or strategy (or reply to a top-level comment); a few an
    hour."""
    limit = ctx.settings.rate_limit_comments_per_hour
    usage = await ctx.limiter.hit(f"comments:user:{principal.user_id}", limit, HOUR_S)
    if not usage.allowed:
        raise RateLimited(
            f"You posted {limit} comments this hour; retry in {usage.retry_after} s.",
            retry_after=usage.retry_after,
        )
    async with ctx.transaction() as uow:
        target = Target(body.portfolio_id, body.strategy_id)
        comment = await service.post(uow, principal, target, body.text, body.parent_id)
        return render(comment, await service.author_names(uow.session, [comment]))


@router.get("/comments", response_model=list[CommentRead])
async def listing(
    principal: MaybeCaller,
    ctx: Ctx,
    portfolio_id: Id | None = None,
    strategy_id: Id | None = None,
    before_id: Id | None = None,
    limit: Limit = 20,
) -> list[CommentRead]:
    """A portfolio's or a strategy's comments, newest first (page with before_id), each with
    its replies. Readable signed out on a public portfolio or strategy, as its page is."""
    if (portfolio_id is None) == (strategy_id is None):
        raise ValidationFailed(ONE_TARGET)
    async with ctx.db.reader() as session:
        target = Target(portfolio_id, strategy_id)
        tops, replies = await service.thread(
            session,
            principal.user_id if principal else None,
            target,
            before_id=before_id,
            limit=limit,
        )
        every = [*tops, *(reply for top in tops for reply in replies[top.id])]
        names = await service.author_names(session, every)
        return [render(top, names, replies[top.id]) for top in tops]


@router.patch("/comments/{comment_id}", response_model=CommentRead)
async def edit(comment_id: Id, body: CommentEdit, principal: Writer, ctx: Ctx) -> CommentRead:
    """Edit my comment, within the edit window after posting."""
    async with ctx.transaction() as uow:
        window = ctx.settings.comment_edit_window_s
        comment = await service.edit(uow, principal.user_id, comment_id, body.text, window)
        return render(comment, await service.author_names(uow.session, [comment]))


@router.delete("/comments/{comment_id}", response_model=Ok)
async def delete(comment_id: Id, principal: Writer, ctx: Ctx) -> Ok:
    """Delete my comment, or any comment on my portfolio or strategy."""
    async with ctx.transaction() as uow:
        await service.delete(uow, principal.user_id, comment_id)
    return Ok()
