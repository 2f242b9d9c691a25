"""What the bot does with an update from Telegram (processed in the background, once each)."""

from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.live import telegram as live_telegram
from papertrade.models import TelegramBinding, TelegramChannel, TelegramUpdate
from papertrade.tg import channels, service, text
from papertrade.tg.signals import Source
from papertrade.uow import AsyncWork

NO_PORTFOLIO = (
    "To trade signals posted here, choose a portfolio in Papertrade (Settings → Telegram, or "
    "PUT /v1/tg/signals). Commands: /unlink."
)


@dataclass(frozen=True, slots=True)
class SignalWork:
    """A signal to execute outside the update's transaction (it has its own)."""

    chat_id: int  # where the reply goes
    source: Source
    body: str
    limit_chat: int = 0  # whose signal budget it uses (the channel's, for a channel post)

    @property
    def budget(self) -> int:
        return self.limit_chat or self.chat_id


# The parts of an update that name the chat it came from (the others, such as an inline query,
# trade nothing).
_CHATTING = ("message", "channel_post", "my_chat_member")


def chat_of(update: Any) -> int | None:
    """The chat an update came from, if it names one a BIGINT holds."""
    if not isinstance(update, dict):
        return None
    for kind in _CHATTING:
        part = update.get(kind)
        chat = part.get("chat") if isinstance(part, dict) else None
        chat_id = chat.get("id") if isinstance(chat, dict) else None
        if (
            isinstance(chat_id, int)
            and not isinstance(chat_id, bool)
            and -(2**63) <= chat_id < 2**63
        ):
            return chat_id
    return None


async def waiting_before(session: AsyncSession, chat_id: int, update_id: int) -> list[int]:
    """The chat's updates numbered before `update_id` and not processed yet, oldest first."""
    rows = await session.scalars(
        select(TelegramUpdate.update_id)
        .where(
            TelegramUpdate.chat_id == chat_id,
            TelegramUpdate.processed_at.is_(None),
            TelegramUpdate.update_id < update_id,
        )
        .order_by(TelegramUpdate.update_id)
    )
    return list(rows)


WELCOME = (
    "Papertrade notifications. To link your account, open Settings → Telegram in Papertrade "
    "and tap the link there. /unlink stops notifications in this chat."
)


async def handle(
    uow: AsyncWork, update_id: int, update: dict[str, Any], secret: str = ""
) -> tuple[int | None, str, str] | SignalWork | live_telegram.KillWork:
    """(the chat to answer, the answer in HTML or "", the outcome to record), or a signal."""
    if isinstance(update.get("my_chat_member"), dict):
        return await channels.member_changed(uow, update)
    if isinstance(update.get("channel_post"), dict):
        return await channel_post(uow, update_id, update["channel_post"])
    message = update.get("message")
    if not isinstance(message, dict):
        return None, "", "ignored: not a message"
    return await private_message(uow, update_id, message, secret)


async def private_message(
    uow: AsyncWork, update_id: int, message: dict[str, Any], secret: str
) -> tuple[int | None, str, str] | SignalWork | live_telegram.KillWork:
    """A message to the bot: a command (/start, /unlink, /kill) or a signal."""
    chat, sender = message.get("chat"), message.get("from")
    content = message.get("text")
    if not isinstance(chat, dict) or not isinstance(chat.get("id"), int):
        return None, "", "ignored: no chat"
    chat_id = int(chat["id"])
    if not isinstance(content, str) or not isinstance(sender, dict):  # a photo, a sticker…
        return chat_id, WELCOME, "ignored: no text"
    if chat.get("type") != "private":
        return None, "", "ignored: not a private chat"
    user_id = sender.get("id")
    if not isinstance(user_id, int):
        return None, "", "ignored: no sender"
    command, _, argument = content.strip().partition(" ")
    command = command.split("@", 1)[0].lower()  # /start@PapertradeBot
    if command == "/start" and argument.strip():
        username = sender.get("username")
        reply = await service.bind(
            uow, argument.strip(), user_id, chat_id, username if isinstance(username, str) else ""
        )
        return chat_id, reply, "bind" if reply.startswith("Linked") else "bind refused"
    if command == "/start":
        return chat_id, WELCOME, "welcome"
    if command == "/unlink":
        return chat_id, await service.unbind_chat(uow, user_id), "unlink"
    binding = await uow.session.scalar(
        select(TelegramBinding).where(TelegramBinding.telegram_user_id == user_id)
    )
    if command == "/kill" and binding is not None and binding.status == "active" and secret:
        return await _kill(uow, secret, binding, user_id, chat_id, argument.split())
    if command.startswith("/"):
        return chat_id, WELCOME, "help"
    if binding is None:
        return chat_id, WELCOME, "help"
    if binding.signal_portfolio_id is None:
        return chat_id, NO_PORTFOLIO, "no signal portfolio"
    date = message.get("date")
    sent_at = int(date) * 1000 if isinstance(date, int) else uow.now()
    source = Source(
        binding.user_id,
        binding.signal_portfolio_id,
        binding.signal_size_percent,
        update_id,
        sent_at,
    )
    return SignalWork(chat_id, source, content)


async def channel_post(
    uow: AsyncWork, update_id: int, post: dict[str, Any]
) -> tuple[int | None, str, str] | SignalWork:
    """A post in a channel: a signal when the channel is connected and names a portfolio."""
    chat = post.get("chat")
    if not isinstance(chat, dict) or not isinstance(chat.get("id"), int):
        return None, "", "ignored: no chat"
    channel = await uow.session.get(TelegramChannel, int(chat["id"]))
    if channel is None:
        return None, "", "ignored: channel not connected"
    body = post.get("text") if isinstance(post.get("text"), str) else post.get("caption")
    if not isinstance(body, str) or not channels.looks_like_signal(body):
        return None, "", "ignored: not a signal"
    owner = await uow.session.get(TelegramBinding, channel.user_id)
    reply_to = owner.chat_id if owner is not None and owner.status == "active" else None
    name = channel.title or str(channel.chat_id)
    if channel.portfolio_id is None:
        reply = (
            f"A signal was posted in {text.escape(name)}, but no portfolio is chosen "
            "for this channel: choose one in Papertrade (Settings → Telegram)."
        )
        return reply_to, reply, "no signal portfolio"
    date = post.get("date")
    source = Source(
        channel.user_id,
        channel.portfolio_id,
        channel.size_percent,
        update_id,
        int(date) * 1000 if isinstance(date, int) else uow.now(),
        channel=name,
    )
    return SignalWork(reply_to or 0, source, body, limit_chat=channel.chat_id)


async def _kill(
    uow: AsyncWork,
    secret: str,
    binding: TelegramBinding,
    tg_user: int,
    chat_id: int,
    words: list[str],
) -> tuple[int | None, str, str] | live_telegram.KillWork:
    """`/kill` asks; `/kill confirm <code>` or `/kill close <code>` fires (live/telegram.py)."""
    now = uow.now()
    if len(words) == 2 and words[0].lower() in ("confirm", "close"):
        if live_telegram.valid(secret, tg_user, now, words[1]):
            return live_telegram.KillWork(chat_id, binding.user_id, words[0].lower() == "close")
        return chat_id, "That code has expired or is wrong: send /kill again.", "kill refused"
    return (
        chat_id,
        await live_telegram.ask(uow.session, secret, binding.user_id, tg_user, now),
        "kill asked",
    )


async def process(
    uow: AsyncWork, update_id: int, secret: str = ""
) -> str | SignalWork | live_telegram.KillWork:
    """Process a stored update unless it was already; returns its outcome, or the signal it
    carries (then `finish` records the outcome once the signal was handled)."""
    row = await uow.session.get(TelegramUpdate, update_id, with_for_update=True)
    if row is None:
        return "unknown update"
    if row.processed_at is not None:
        return row.outcome
    try:
        update = orjson.loads(row.body)
    except orjson.JSONDecodeError:
        update = {}
    result = await handle(uow, update_id, update if isinstance(update, dict) else {}, secret)
    if isinstance(result, SignalWork | live_telegram.KillWork):
        return result
    chat_id, reply, outcome = result
    return await finish(uow, update_id, chat_id, reply, outcome)


async def finish(
    uow: AsyncWork,
    update_id: int,
    chat_id: int | None,
    reply: str,
    outcome: str,
    user_id: int | None = None,
) -> str:
    """Queue the reply and mark the update processed, in one transaction."""
    row = await uow.session.get(TelegramUpdate, update_id, with_for_update=True)
    if row is None or row.processed_at is not None:
        return row.outcome if row is not None else "unknown update"
    if chat_id is not None and reply:
        service.queue(uow, chat_id, reply, user_id=user_id)
    row.processed_at = uow.now()
    row.outcome = outcome[:40]
    return outcome
