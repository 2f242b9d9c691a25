"""What the bot does with an update from Telegram (processed in the background, once each)."""

from typing import Any

import orjson

from papertrade.models import TelegramUpdate
from papertrade.tg import service
from papertrade.uow import AsyncWork

WELCOME = (
    "Papertrade notifications. To link your account, open Settings → Telegram in Papertrade "
    "and tap the link there. /unlink stops notifications in this chat."
)


async def handle(uow: AsyncWork, update: dict[str, Any]) -> tuple[int | None, str, str]:
    """(the chat to answer, the answer in HTML or "", the outcome to record)."""
    message = update.get("message")
    if not isinstance(message, dict):
        return None, "", "ignored: not a message"
    chat, sender = message.get("chat"), message.get("from")
    text = message.get("text")
    if not isinstance(chat, dict) or not isinstance(chat.get("id"), int):
        return None, "", "ignored: no chat"
    chat_id = int(chat["id"])
    if not isinstance(text, str) or not isinstance(sender, dict):
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
    return chat_id, WELCOME, "help"


async def process(uow: AsyncWork, update_id: int) -> str:
    """Process a stored update unless it was already; returns its outcome."""
    row = await uow.session.get(TelegramUpdate, update_id, with_for_update=True)
    if row is None:
        return "unknown update"
    if row.processed_at is not None:
        return row.outcome
    try:
        update = orjson.loads(row.body)
    except orjson.JSONDecodeError:
        update = {}
    chat_id, reply, outcome = await handle(uow, update if isinstance(update, dict) else {})
    if chat_id is not None and reply:
        service.queue(uow, chat_id, reply)
    row.processed_at = uow.now()
    row.outcome = outcome[:40]
    return outcome
