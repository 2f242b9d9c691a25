"""The kill switch from Telegram: `/kill` in the bot's private chat of a bound user.

Two steps, so a stray message cannot fire it: `/kill` answers what it would stop and a
confirmation code; `/kill confirm <code>` (or `/kill close <code>`, which also closes every
position) fires it. The code is an HMAC of the Telegram user and a two-minute window under the
service's secret key, so nothing has to be stored between the two messages and a code is
worthless to anyone else or later than about four minutes. The report per account is the
bot's answer. The switch itself (live/kill.py) runs outside the update's transaction."""

import hashlib
import hmac
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.context import AppContext
from papertrade.live.kill import KillReport, kill
from papertrade.models import LiveAccount
from papertrade.tg.text import escape

WINDOW_MS = 120_000


@dataclass(frozen=True, slots=True)
class KillWork:
    """A confirmed `/kill`, fired after the update's transaction (it calls the exchanges)."""

    chat_id: int
    user_id: int
    close_positions: bool


def code(secret: str, telegram_user_id: int, now: int, *, back: int = 0) -> str:
    window = now // WINDOW_MS - back
    message = f"live-kill:{telegram_user_id}:{window}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:8]


def valid(secret: str, telegram_user_id: int, now: int, given: str) -> bool:
    return any(
        hmac.compare_digest(code(secret, telegram_user_id, now, back=back), given.lower())
        for back in (0, 1)
    )


async def ask(session: AsyncSession, secret: str, user_id: int, tg_user: int, now: int) -> str:
    count = await session.scalar(
        select(func.count()).select_from(LiveAccount).where(LiveAccount.user_id == user_id)
    )
    if not count:
        return "You have no live accounts: there is nothing to stop."
    confirm = code(secret, tg_user, now)
    return (
        f"<b>Kill switch</b>: this stops mirroring on your {count} live account(s) and cancels "
        "every open order on the exchange.\n"
        f"Send <code>/kill confirm {confirm}</code> to do it, or "
        f"<code>/kill close {confirm}</code> to also close every position at market. "
        "The code is valid for about two minutes."
    )


async def fire(ctx: AppContext, work: KillWork) -> str:
    reports = await kill(
        ctx, work.user_id, None, close_positions=work.close_positions, reason="telegram /kill"
    )
    async with ctx.db.reader() as session:
        labels = dict(
            (
                await session.execute(
                    select(LiveAccount.id, LiveAccount.label).where(
                        LiveAccount.user_id == work.user_id
                    )
                )
            ).all()
        )
    return report_text(reports, labels)


def report_text(reports: Sequence[KillReport], labels: dict[int, str]) -> str:
    lines = ["<b>Kill switch fired.</b>"]
    for report in reports:
        name = escape(labels.get(report.account_id, f"#{report.account_id}"))
        if report.error:
            lines.append(f"{name}: stopped; the exchange failed: {escape(report.error)}")
            continue
        cancelled = ", ".join(report.cancelled_symbols) or "none"
        line = f"{name}: stopped; open orders cancelled: {cancelled}"
        if report.closed_symbols:
            line += f"; positions closed: {', '.join(report.closed_symbols)}"
        lines.append(line)
    return "\n".join(lines)
