"""Feedback: submit, list mine, and the operators' side (list, answer)."""

from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.errors import BadRequest, NotFound
from papertrade.feedback.events import FeedbackAnswered
from papertrade.feedback.screenshot import Screenshot
from papertrade.models import Feedback, FeedbackScreenshot
from papertrade.uow import AsyncWork

OPEN, ANSWERED = "open", "answered"


def not_found() -> NotFound:
    return NotFound("Feedback not found.", code="feedback_not_found")


async def submit(
    uow: AsyncWork, user_id: int, *, category: str, text: str, page: str, app_version: str
) -> Feedback:
    row = Feedback(
        user_id=user_id,
        category=category,
        text=text,
        page=page,
        app_version=app_version,
        status=OPEN,
        created_at=uow.now(),
    )
    uow.session.add(row)
    await uow.session.flush()
    return row


async def mine(
    session: AsyncSession, user_id: int, *, before_id: int | None, limit: int
) -> Sequence[Feedback]:
    statement = select(Feedback).where(Feedback.user_id == user_id)
    if before_id is not None:
        statement = statement.where(Feedback.id < before_id)
    return (await session.scalars(statement.order_by(Feedback.id.desc()).limit(limit))).all()


async def get_mine(session: AsyncSession, user_id: int, feedback_id: int) -> Feedback:
    row = await session.get(Feedback, feedback_id)
    if row is None or row.user_id != user_id:
        raise not_found()
    return row


async def listing(session: AsyncSession, status: str | None, limit: int) -> Sequence[Feedback]:
    statement = select(Feedback)
    if status is not None:
        statement = statement.where(Feedback.status == status)
    return (await session.scalars(statement.order_by(Feedback.id).limit(limit))).all()


async def answer(uow: AsyncWork, feedback_id: int, *, by: str, text: str) -> Feedback:
    """Answer (or answer again); the user reads it in the feedback list and, through the
    durable feedback.answered event, in the inbox."""
    row = await uow.session.get(Feedback, feedback_id, with_for_update=True)
    if row is None:
        raise not_found()
    if not text.strip():
        raise BadRequest("An answer needs some text.")
    row.status = ANSWERED
    row.answer = text
    row.answered_by = by
    row.answered_at = uow.now()
    uow.emit(FeedbackAnswered(user_id=row.user_id, feedback_id=row.id, answer=text))
    return row


async def attach_screenshot(
    uow: AsyncWork, user_id: int, feedback_id: int, shot: Screenshot
) -> FeedbackScreenshot:
    """Attach (or replace) the screenshot of one of my feedback messages."""
    await get_mine(uow.session, user_id, feedback_id)
    row = await uow.session.get(FeedbackScreenshot, feedback_id, with_for_update=True)
    if row is None:
        row = FeedbackScreenshot(feedback_id=feedback_id, created_at=uow.now())
        uow.session.add(row)
    row.png, row.width, row.height, row.sent_format = (
        shot.png,
        shot.width,
        shot.height,
        shot.sent_format,
    )
    await uow.session.flush()
    return row


async def screenshot_of(session: AsyncSession, feedback_id: int) -> FeedbackScreenshot | None:
    return await session.get(FeedbackScreenshot, feedback_id)


async def screenshot_sizes(
    session: AsyncSession, feedback_ids: Sequence[int]
) -> dict[int, tuple[int, int]]:
    """(width, height) of the screenshots of `feedback_ids` (without loading the images)."""
    if not feedback_ids:
        return {}
    rows = await session.execute(
        select(
            FeedbackScreenshot.feedback_id, FeedbackScreenshot.width, FeedbackScreenshot.height
        ).where(FeedbackScreenshot.feedback_id.in_(list(feedback_ids)))
    )
    return {feedback_id: (width, height) for feedback_id, width, height in rows.all()}
