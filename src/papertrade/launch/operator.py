"""What `papertrade launch …` does: make invitation codes, invite waitlisters from the top."""

import csv
import io

from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.launch import service


async def create_codes(
    settings: Settings, *, count: int, max_uses: int | None, days: int | None, note: str
) -> str:
    """`count` new operator codes, one a line."""
    ctx = AppContext.build(settings)
    try:
        async with ctx.transaction() as uow:
            made = [
                await service.create_code(
                    uow, owner_id=None, max_uses=max_uses, days=days, description=note
                )
                for _ in range(count)
            ]
            return "\n".join(row.code for row in made)
    finally:
        await ctx.close()


async def export_waitlist(settings: Settings) -> str:
    """The waitlist as CSV, in line order first (verified, not invited), then everyone else."""
    ctx = AppContext.build(settings)
    try:
        async with ctx.db.reader() as session:
            rows = await service.export(session)
    finally:
        await ctx.close()
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        [
            "position",
            "email",
            "referral_code",
            "referrals",
            "verified_at",
            "invited_at",
            "created_at",
        ]
    )
    for row in rows:
        writer.writerow(["" if v is None else v for v in row])
    return out.getvalue().rstrip("\n")


async def invite_waitlist(settings: Settings, count: int) -> str:
    """Invite the first `count` verified waitlisters; their codes go out as waitlist.invited
    events (the e-mail consumer sends them)."""
    ctx = AppContext.build(settings)
    try:
        async with ctx.transaction() as uow:
            invited = await service.invite_top(uow, count)
    finally:
        await ctx.close()
    if not invited:
        return "nobody is waiting"
    return "\n".join(f"{email}  {code}" for email, code in invited)
