"""What the bot does with an update from Telegram (processed in the background, once each)."""

from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import select

from papertrade.models import TelegramBinding, TelegramUpdate
from papertrade.tg import service
from papertrade.tg.signals import Source
from papertrade.uow import AsyncWork

NO_PORTFOLIO = (
    "To trade signals posted here, choose a portfolio in Papertrade (Settings → Telegram, or "
    "PUT /v1/tg/signals). Commands: /unlink."
)


@dataclass(frozen=True, slots=True)
class SignalWork:
    """A signal to execute outside the update's transaction (it has its own)."""

    chat_id: int
    source: Source
    body: str


WELCOME = (
    "Papertrade notifications. To link your account, open Settings → Telegram in Papertrade "
    "and tap the link there. /unlink stops notifications in this chat."
)


async def handle(
    uow: AsyncWork, update_id: int, update: dict[str, Any]
) -> tuple[int | None, str, str] | SignalWork:
    """(the chat to answer, the answer in HTML or "", the outcome to record), or a signal."""
    message = update.get("message")
    if not isinstance(message, dict):
        return None, "", "ignored: not a message"
    chat, sender = message.get("chat"), message.get("from")
    text = message.get("text")
    if not isinstance(chat, dict) or not isinstance(chat.get("id"), int):
        return None, "", "ignored: no chat"
    chat_id = int(chat["id"])
    if not isinstance(text, str) or not isinstance(sender, dict):  # a photo, a sticker…
        return chat_id, WELCOME, "ignored: no text"
    if chat.get("type") != "private":
        return None, "", "ignored: not a private chat"
    user_id = sender.get("id")
    if not isinstance(user_id, int):
        return None, "", "ignored: no sender"
    command, _, argument = text.strip().partition(" ")
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
    if command.startswith("/"):
        return chat_id, WELCOME, "help"
    binding = await uow.session.scalar(
        select(TelegramBinding).where(TelegramBinding.telegram_user_id == user_id)
    )
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
    return SignalWork(chat_id, source, text)


async def process(uow: AsyncWork, update_id: int) -> str | SignalWork:
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
    result = await handle(uow, update_id, update if isinstance(update, dict) else {})
    if isinstance(result, SignalWork):
        return result
    chat_id, reply, outcome = result
    return await finish(uow, update_id, chat_id, reply, outcome)


async def finish(
    uow: AsyncWork, update_id: int, chat_id: int | None, reply: str, outcome: str
) -> str:
    """Queue the reply and mark the update processed, in one transaction."""
    row = await uow.session.get(TelegramUpdate, update_id, with_for_update=True)
    if row is None or row.processed_at is not None:
        return row.outcome if row is not None else "unknown update"
    if chat_id is not None and reply:
        service.queue(uow, chat_id, reply)
    row.processed_at = uow.now()
    row.outcome = outcome[:40]
    return outcome
