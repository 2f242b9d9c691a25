"""Telegram channels as signal sources ("or from a channel they connect", issue item 6).

Connecting: a bound user makes the bot an administrator of their channel. Telegram then sends a
`my_chat_member` update whose `from` is that user; we record the channel for their account and
tell them in their private chat to choose the portfolio (`PUT /v1/tg/channels/{chat_id}`). Only
someone who can add administrators to the channel can do this, so nobody connects a channel
that is not theirs to run. Removing the bot (or demoting it) disconnects the channel.

Posting: a `channel_post` in a connected channel with a portfolio chosen is a Cornix-style
signal (text commands are not read in channels: channels carry chatter too); it goes through the
same path as a private message (tg/signals.py: de-duplication on update_id, staleness, signal
history with source `tg`). A post that names no USDT pair is not a signal and is ignored
silently; one that does but is wrong gets a reply, in the owner's private chat (a channel's
readers should not see the bot's corrections), saying what to fix.
"""

from decimal import Decimal
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.errors import NotFound
from papertrade.models import TelegramBinding, TelegramChannel
from papertrade.portfolios import service as portfolio_service
from papertrade.tg import cornix, text
from papertrade.uow import AsyncWork

ADMIN = ("administrator", "creator")


def channel_view(row: TelegramChannel) -> dict[str, Any]:
    return {
        "chat_id": row.chat_id,
        "title": row.title,
        "portfolio_id": row.portfolio_id,
        "size_percent": row.size_percent,
        "connected_at": row.connected_at,
    }


async def channels_of(session: AsyncSession, user_id: int) -> list[TelegramChannel]:
    rows = await session.scalars(
        select(TelegramChannel)
        .where(TelegramChannel.user_id == user_id)
        .order_by(TelegramChannel.connected_at)
    )
    return list(rows)


async def owned(session: AsyncSession, user_id: int, chat_id: int) -> TelegramChannel:
    row = await session.get(TelegramChannel, chat_id, with_for_update=True)
    if row is None or row.user_id != user_id:
        raise NotFound(
            "No connected channel has this chat id: make the bot an administrator of the "
            "channel first.",
            code="telegram_channel_not_found",
        )
    return row


async def configure(
    uow: AsyncWork,
    principal: Principal,
    chat_id: int,
    portfolio_id: int | None,
    size_percent: Decimal,
) -> TelegramChannel:
    if portfolio_id is not None:  # someone else's portfolio is a 404 whatever else
        await portfolio_service.get_owned(uow.session, principal, portfolio_id)
    row = await owned(uow.session, principal.user_id, chat_id)
    row.portfolio_id = portfolio_id
    row.size_percent = size_percent
    return row


async def disconnect(uow: AsyncWork, user_id: int, chat_id: int) -> TelegramChannel:
    row = await owned(uow.session, user_id, chat_id)
    await uow.session.delete(row)
    return row


def _title(chat: dict[str, Any]) -> str:
    title = chat.get("title")
    return title[:128] if isinstance(title, str) else ""


async def member_changed(uow: AsyncWork, update: dict[str, Any]) -> tuple[int | None, str, str]:
    """A `my_chat_member` update: the bot was added to, promoted in or removed from a chat.
    Returns (the chat to answer, the answer in HTML, the outcome)."""
    change = update["my_chat_member"]
    chat, sender = change.get("chat"), change.get("from")
    new = change.get("new_chat_member")
    if not isinstance(chat, dict) or not isinstance(chat.get("id"), int):
        return None, "", "ignored: no chat"
    if chat.get("type") != "channel":
        return None, "", "ignored: not a channel"
    chat_id = int(chat["id"])
    status = new.get("status") if isinstance(new, dict) else None
    title = _title(chat)
    session = uow.session
    existing = await session.get(TelegramChannel, chat_id, with_for_update=True)
    if status not in ADMIN:  # removed or demoted: its posts can no longer be read
        if existing is None:
            return None, "", "ignored: not connected"
        owner = await session.get(TelegramBinding, existing.user_id)
        await session.delete(existing)
        reply = (
            f"The bot is no longer an administrator of {text.escape(title or 'your channel')}: "
            "its posts no longer trade."
        )
        return (owner.chat_id if owner else None), reply, "channel disconnected"
    user_id = sender.get("id") if isinstance(sender, dict) else None
    if not isinstance(user_id, int):
        return None, "", "ignored: no sender"
    binding = await session.scalar(
        select(TelegramBinding).where(TelegramBinding.telegram_user_id == user_id)
    )
    if binding is None:
        # The private chat with someone who never started the bot may not exist: Telegram
        # then refuses the message, which is harmless.
        return (
            user_id,
            "To trade signals from this channel, link your Papertrade account first "
            "(Settings → Telegram), then make the bot an administrator again.",
            "channel refused: not linked",
        )
    if existing is not None and existing.user_id == binding.user_id:
        existing.title = title
        return None, "", "channel updated"
    if existing is not None:  # another admin of the channel connected it: it moves to them
        await session.execute(delete(TelegramChannel).where(TelegramChannel.chat_id == chat_id))
        await session.flush()
    session.add(
        TelegramChannel(
            chat_id=chat_id, user_id=binding.user_id, title=title, connected_at=uow.now()
        )
    )
    reply = (
        f"Channel {text.escape(title or str(chat_id))} connected. Choose the portfolio its "
        "Cornix signals trade in Papertrade (Settings → Telegram); until then posts are not "
        "traded."
    )
    return binding.chat_id, reply, "channel connected"


def looks_like_signal(body: str) -> bool:
    """A channel post is read as a signal when it names a USDT pair."""
    return cornix.PAIR.search(body) is not None
