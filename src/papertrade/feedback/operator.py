"""What `papertrade feedback …` does: list feedback, export a screenshot, answer."""

import asyncio
from pathlib import Path

from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.feedback import service


async def listing(settings: Settings, status: str | None, limit: int) -> str:
    ctx = AppContext.build(settings)
    try:
        async with ctx.db.reader() as session:
            rows = await service.listing(session, status, limit)
            sizes = await service.screenshot_sizes(session, [r.id for r in rows])
    finally:
        await ctx.close()
    if not rows:
        return "no feedback"

    def shot(feedback_id: int) -> str:
        size = sizes.get(feedback_id)
        return f" [screenshot {size[0]}x{size[1]}]" if size else ""

    return "\n".join(
        f"#{r.id} [{r.status}] {r.category} user {r.user_id} {r.page or '-'} "
        f"{r.app_version or '-'}{shot(r.id)}: {' '.join(r.text.split())[:200]}"
        for r in rows
    )


async def export_screenshot(settings: Settings, feedback_id: int, out: Path) -> str:
    """Write the screenshot of a message (the PNG we re-encoded, never the upload) to `out`."""
    ctx = AppContext.build(settings)
    try:
        async with ctx.db.reader() as session:
            found = await service.screenshot_of(session, feedback_id)
    finally:
        await ctx.close()
    if found is None:
        return f"refused: feedback #{feedback_id} has no screenshot"
    await asyncio.to_thread(out.write_bytes, found.png)  # a CLI's one file, off the loop
    return f"feedback #{feedback_id}: {found.width}x{found.height} PNG written to {out}"


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
