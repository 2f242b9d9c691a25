"""An app wired to the fake Bot API, and a way to play Telegram's side of the webhook."""

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select

from papertrade.config import Settings
from papertrade.models import TelegramMessage, TelegramUpdate
from papertrade.tg.text import split
from tests.conftest import client_for, running_app
from tests.fakes.telegram_api import TOKEN, FakeTelegram, fake_telegram

SECRET = "webhook-secret_0123456789"
_update_ids = itertools.count(1000)


@asynccontextmanager
async def telegram_app(
    settings: Settings, **overrides: Any
) -> AsyncIterator[tuple[FastAPI, FakeTelegram]]:
    async with fake_telegram() as fake:
        configured = settings.model_copy(
            update={
                "telegram_bot_token": TOKEN,
                "telegram_bot_username": "pt_bot",
                "telegram_webhook_secret": SECRET,
                "telegram_api_base_url": fake.base_url,
                # Replies to one chat without Telegram's 1 a second between them; the pacing
                # has its own test (test_outbound), which sets the rates it checks.
                "telegram_per_chat_per_s": 50.0,
                **overrides,
            }
        )
        async with running_app(configured) as app:
            yield app, fake


def message_update(
    text: str, *, tg_user: int, chat_id: int | None = None, update_id: int | None = None
) -> dict[str, Any]:
    return {
        "update_id": update_id if update_id is not None else next(_update_ids),
        "message": {
            "message_id": 1,
            "date": 1764080000,
            "chat": {"id": chat_id or tg_user, "type": "private"},
            "from": {"id": tg_user, "is_bot": False, "first_name": "Ann", "username": "ann"},
            "text": text,
        },
    }


async def send_update(app: FastAPI, update: Any, secret: str | None = SECRET) -> httpx.Response:
    headers = {"X-Telegram-Bot-Api-Secret-Token": secret} if secret is not None else {}
    async with client_for(app) as telegram:
        return await telegram.post("/v1/webhook/tg", json=update, headers=headers)


async def processed(app: FastAPI, update_id: int, within: float = 30) -> str:
    """The outcome of an update once the background job has processed it."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        async with app.state.ctx.db.reader() as session:
            row = await session.scalar(
                select(TelegramUpdate).where(TelegramUpdate.update_id == update_id)
            )
        if row is not None and row.processed_at is not None:
            return str(row.outcome)
        assert asyncio.get_running_loop().time() < deadline, "the update was not processed"
        await asyncio.sleep(0.05)


async def queued_mark(app: FastAPI, chat_id: int) -> int:
    """The id of the last message queued for `chat_id` so far, sent or not (0: none yet)."""
    async with app.state.ctx.db.reader() as session:
        last = await session.scalar(
            select(func.max(TelegramMessage.id)).where(TelegramMessage.chat_id == chat_id)
        )
    return int(last or 0)


async def reply_after(
    app: FastAPI, fake: FakeTelegram, chat_id: int, mark: int, within: float = 30
) -> str:
    """The bot's answer in `chat_id` to the one update of that chat processed since `mark` (a
    queued_mark taken before it was sent), once Telegram received it.

    The answer is the message queued with the update's outcome (tg/updates.finish), without a
    notification id; a notification to the chat carries the id of its inbox row (every kind goes
    to the inbox unless the user turned it off). Counting what Telegram received instead would
    race the sender: a message queued before the mark (the link's confirmation) may still be on
    its way, and a notification may be queued before the answer.
    """
    deadline = asyncio.get_running_loop().time() + within
    while True:
        async with app.state.ctx.db.reader() as session:
            row = (
                await session.execute(
                    select(TelegramMessage.text, TelegramMessage.status)
                    .where(
                        TelegramMessage.chat_id == chat_id,
                        TelegramMessage.id > mark,
                        TelegramMessage.notification_id.is_(None),
                    )
                    .order_by(TelegramMessage.id)
                    .limit(1)
                )
            ).first()
        if row is not None and row.status == "sent":  # marked after Telegram answered
            received = fake.to(chat_id)
            assert all(piece in received for piece in split(row.text)), (row.text, received)
            return str(row.text)
        assert row is None or row.status in ("pending", "sending"), (row.status, row.text)
        assert asyncio.get_running_loop().time() < deadline, "the bot did not answer"
        await asyncio.sleep(0.05)


async def link_code(user: Any) -> str:
    response = await user.post("/v1/tg/link")
    assert response.status_code == 201, response.text
    url = response.json()["url"]
    assert url.startswith("https://t.me/pt_bot?start=")
    assert response.json()["qr_svg"].startswith("data:image/svg+xml")
    return str(url.rsplit("=", 1)[1])
