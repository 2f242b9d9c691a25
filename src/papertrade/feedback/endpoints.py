"""/v1/feedback: submit feedback, follow mine."""

from typing import Annotated

from fastapi import APIRouter, Query

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.errors import RateLimited
from papertrade.feedback import service
from papertrade.feedback.schemas import FeedbackCreate, FeedbackRead
from papertrade.kit.ids import Id

router = APIRouter(tags=["feedback"])
Limit = Annotated[int, Query(ge=1, le=200)]
HOUR_S = 3600


@router.post("/feedback", status_code=201, response_model=FeedbackRead)
async def submit(body: FeedbackCreate, principal: Writer, ctx: Ctx) -> FeedbackRead:
    """Send feedback (the web app attaches the page and its version); a few an hour."""
    limit = ctx.settings.rate_limit_feedback_per_hour
    usage = await ctx.limiter.hit(f"feedback:user:{principal.user_id}", limit, HOUR_S)
    if not usage.allowed:
        raise RateLimited(
            f"You sent {limit} messages this hour; retry in {usage.retry_after} s.",
            retry_after=usage.retry_after,
        )
    async with ctx.transaction() as uow:
        row = await service.submit(
            uow,
            principal.user_id,
            category=body.category,
            text=body.text,
            page=body.page,
            app_version=body.app_version,
        )
        return FeedbackRead.model_validate(row)


@router.get("/feedback", response_model=list[FeedbackRead])
async def mine(
    principal: Caller, ctx: Ctx, before_id: Id | None = None, limit: Limit = 50
) -> list[FeedbackRead]:
    """My feedback with its status and answer, newest first."""
    async with ctx.db.reader() as session:
        rows = await service.mine(session, principal.user_id, before_id=before_id, limit=limit)
        return [FeedbackRead.model_validate(row) for row in rows]


@router.get("/feedback/{feedback_id}", response_model=FeedbackRead)
async def one(feedback_id: Id, principal: Caller, ctx: Ctx) -> FeedbackRead:
    async with ctx.db.reader() as session:
        return FeedbackRead.model_validate(
            await service.get_mine(session, principal.user_id, feedback_id)
        )
