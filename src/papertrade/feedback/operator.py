"""What `papertrade feedback …` does: list feedback and answer it."""

from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.feedback import service


async def listing(settings: Settings, status: str | None, limit: int) -> str:
    ctx = AppContext.build(settings)
    try:
        async with ctx.db.reader() as session:
            rows = await service.listing(session, status, limit)
    finally:
        await ctx.close()
    if not rows:
        return "no feedback"
    return "\n".join(
        f"#{r.id} [{r.status}] {r.category} user {r.user_id} {r.page or '-'} "
        f"{r.app_version or '-'}: {' '.join(r.text.split())[:200]}"
        for r in rows
    )


async def answer(settings: Settings, feedback_id: int, *, by: str, text: str) -> str:
    ctx = AppContext.build(settings)
    try:
        async with ctx.transaction() as uow:
            await service.answer(uow, feedback_id, by=by, text=text)
        return f"feedback #{feedback_id} answered by {by}"
    except PapertradeError as exc:
        return f"refused: {exc.message}"
    finally:
        await ctx.close()
