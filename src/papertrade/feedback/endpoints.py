"""/v1/feedback: submit feedback, follow mine."""

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.errors import NotFound, RateLimited, ValidationFailed
from papertrade.feedback import screenshot, service
from papertrade.feedback.schemas import FeedbackCreate, FeedbackRead, ScreenshotRead
from papertrade.kit.ids import Id
from papertrade.models import Feedback

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


@router.put("/feedback/{feedback_id}/screenshot", response_model=FeedbackRead)
async def attach_screenshot(
    feedback_id: Id, request: Request, principal: Writer, ctx: Ctx
) -> FeedbackRead:
    """Attach a screenshot to one of my messages: the raw image as the body (PNG, JPEG or WebP,
    at most 2 MiB and 8192 pixels a side); it is stored re-encoded as a PNG."""
    async with ctx.db.reader() as session:  # someone else's message: 404 before anything else
        await service.get_mine(session, principal.user_id, feedback_id)
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type not in screenshot.MEDIA_TYPES:
        raise ValidationFailed(
            "Send the image as the body with Content-Type image/png, image/jpeg or image/webp.",
            code="invalid_image",
        )
    shot = screenshot.normalise(await request.body())
    async with ctx.transaction() as uow:
        await service.attach_screenshot(uow, principal.user_id, feedback_id, shot)
        row = await service.get_mine(uow.session, principal.user_id, feedback_id)
        return _read(row, (shot.width, shot.height))


@router.get("/feedback/{feedback_id}/screenshot", response_class=Response)
async def get_screenshot(feedback_id: Id, principal: Caller, ctx: Ctx) -> Response:
    """The screenshot of one of my messages, as the PNG we stored."""
    async with ctx.db.reader() as session:
        await service.get_mine(session, principal.user_id, feedback_id)
        found = await service.screenshot_of(session, feedback_id)
    if found is None:
        raise NotFound("This feedback has no screenshot.", code="screenshot_not_found")
    return Response(
        found.png,
        media_type="image/png",
        headers={
            "Cache-Control": "private, no-store",
            "X-Content-Type-Options": "nosniff",
            "Content-Disposition": f'inline; filename="feedback-{feedback_id}.png"',
        },
    )


def _read(row: Feedback, size: tuple[int, int] | None) -> FeedbackRead:
    read = FeedbackRead.model_validate(row)
    read.screenshot = None if size is None else ScreenshotRead(width=size[0], height=size[1])
    return read


@router.get("/feedback", response_model=list[FeedbackRead])
async def mine(
    principal: Caller, ctx: Ctx, before_id: Id | None = None, limit: Limit = 50
) -> list[FeedbackRead]:
    """My feedback with its status and answer, newest first."""
    async with ctx.db.reader() as session:
        rows = await service.mine(session, principal.user_id, before_id=before_id, limit=limit)
        sizes = await service.screenshot_sizes(session, [row.id for row in rows])
        return [_read(row, sizes.get(row.id)) for row in rows]


@router.get("/feedback/{feedback_id}", response_model=FeedbackRead)
async def one(feedback_id: Id, principal: Caller, ctx: Ctx) -> FeedbackRead:
    async with ctx.db.reader() as session:
        row = await service.get_mine(session, principal.user_id, feedback_id)
        sizes = await service.screenshot_sizes(session, [row.id])
        return _read(row, sizes.get(row.id))
