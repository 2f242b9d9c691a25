"""Binding an account to Telegram by deep link (domain rules B2.1-3), and queueing messages.

The link code is single-use, short-lived and kept only as its SHA-256. One Telegram user is
bound to one account and one account to one Telegram user: binding again moves the binding.
"""

from decimal import Decimal
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.errors import PapertradeError
from papertrade.kit.security import new_token, token_hash
from papertrade.models import TelegramBinding, TelegramLink, TelegramMessage, User
from papertrade.portfolios import service as portfolio_service
from papertrade.tg import text
from papertrade.tg.events import TelegramQueued
from papertrade.uow import AsyncWork

LINK_TTL_MS = 10 * 60_000


class _Announced:
    """Whether this unit of work already emitted TelegramQueued (one event is enough)."""

    done = False


class TelegramNotConfigured(PapertradeError):
    status_code = 503
    code = "telegram_not_configured"


def deep_link(bot_username: str, code: str) -> str:
    return f"https://t.me/{bot_username}?start={code}"


async def create_link(uow: AsyncWork, user_id: int) -> tuple[str, int]:
    """A new single-use code for the user (32 random bytes, base64url: 43 characters, inside
    Telegram's 64-character `A-Za-z0-9_-` start payload); returns it and its expiry."""
    code = new_token(nbytes=32)
    expires_at = uow.now() + LINK_TTL_MS
    uow.session.add(
        TelegramLink(code_hash=token_hash(code), user_id=user_id, expires_at=expires_at)
    )
    return code, expires_at


def status_view(binding: TelegramBinding | None) -> dict[str, Any]:
    if binding is None:
        return {"bound": False, "status": None, "username": None, "bound_at": None}
    return {
        "bound": True,
        "status": binding.status,
        "username": binding.username or None,
        "bound_at": binding.bound_at,
        "signal_portfolio_id": binding.signal_portfolio_id,
        "signal_size_percent": binding.signal_size_percent,
    }


class NotBound(PapertradeError):
    status_code = 409
    code = "telegram_not_bound"


async def set_signal_source(
    uow: AsyncWork, principal: Principal, portfolio_id: int | None, size_percent: Decimal
) -> TelegramBinding:
    """Choose the portfolio that signals posted to the bot trade (None: stop)."""
    if portfolio_id is not None:  # first: someone else's portfolio is a 404 whatever else
        await portfolio_service.get_owned(uow.session, principal, portfolio_id)
    binding = await uow.session.get(TelegramBinding, principal.user_id, with_for_update=True)
    if binding is None:
        raise NotBound("Bind Telegram first (POST /v1/tg/link), then choose the portfolio.")
    binding.signal_portfolio_id = portfolio_id
    binding.signal_size_percent = size_percent
    return binding


async def binding_of(session: AsyncSession, user_id: int) -> TelegramBinding | None:
    return await session.get(TelegramBinding, user_id)


async def unbind(uow: AsyncWork, user_id: int) -> bool:
    result = await uow.session.execute(
        delete(TelegramBinding).where(TelegramBinding.user_id == user_id)
    )
    return bool(getattr(result, "rowcount", 0))


def _masked(email: str) -> str:
    name, _, domain = email.partition("@")
    return f"{name[:2]}***@{domain}"


async def bind(
    uow: AsyncWork, code: str, telegram_user_id: int, chat_id: int, username: str
) -> str:
    """Use a link code sent as `/start <code>`; returns the reply for the chat."""
    session = uow.session
    link = await session.get(TelegramLink, token_hash(code), with_for_update=True)
    now = uow.now()
    if link is None or link.used_at is not None or link.expires_at <= now:
        return (
            "This link is invalid or has expired (links work once, for 10 minutes). "
            "Open Settings → Telegram in Papertrade and tap the new link."
        )
    link.used_at = now
    # One Telegram user ↔ one account: whatever either side was bound to before goes.
    await session.execute(
        delete(TelegramBinding).where(
            (TelegramBinding.user_id == link.user_id)
            | (TelegramBinding.telegram_user_id == telegram_user_id)
        )
    )
    await session.flush()
    session.add(
        TelegramBinding(
            user_id=link.user_id,
            telegram_user_id=telegram_user_id,
            chat_id=chat_id,
            username=username[:64],
            status="active",
            bound_at=now,
        )
    )
    email = await session.scalar(select(User.email).where(User.id == link.user_id)) or ""
    return (
        f"Linked to {text.escape(_masked(email))}. Notifications will arrive here; "
        "/unlink stops them."
    )


async def unbind_chat(uow: AsyncWork, telegram_user_id: int) -> str:
    result = await uow.session.execute(
        delete(TelegramBinding).where(TelegramBinding.telegram_user_id == telegram_user_id)
    )
    if getattr(result, "rowcount", 0):
        return (
            "Unlinked. This chat gets no more notifications; link again from Settings → Telegram."
        )
    return "This chat is not linked to a Papertrade account."


def queue(
    uow: AsyncWork,
    chat_id: int,
    html_text: str,
    *,
    user_id: int | None = None,
    notification_id: int | None = None,
) -> None:
    """Queue a message (HTML) for the sender; it leaves after this unit of work commits."""
    uow.session.add(
        TelegramMessage(
            chat_id=chat_id,
            user_id=user_id,
            notification_id=notification_id,
            text=html_text,
            status="pending",
            attempts=0,
            error="",
            created_at=uow.now(),
        )
    )
    announced = uow.part(_Announced)
    if not announced.done:
        announced.done = True
        uow.emit(TelegramQueued())


async def queue_notifications(
    uow: AsyncWork, items: list[tuple[int, int | None, str, str, str | None]]
) -> int:
    """Queue (user_id, notification_id, title, body, ready HTML or None) to each user's active
    binding; users without one are skipped. Returns how many were queued."""
    users = sorted({user_id for user_id, *_ in items})
    if not users:
        return 0
    chats: dict[int, int] = {}
    for start in range(0, len(users), 5000):
        rows = await uow.session.execute(
            select(TelegramBinding.user_id, TelegramBinding.chat_id).where(
                TelegramBinding.user_id.in_(users[start : start + 5000]),
                TelegramBinding.status == "active",
            )
        )
        chats.update({row.user_id: row.chat_id for row in rows})
    queued = 0
    for user_id, notification_id, title, body, html_text in items:
        chat_id = chats.get(user_id)
        if chat_id is not None:
            queue(
                uow,
                chat_id,
                html_text or text.notification(title, body),
                user_id=user_id,
                notification_id=notification_id,
            )
            queued += 1
    return queued
