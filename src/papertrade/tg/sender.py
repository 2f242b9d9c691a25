"""Sends queued Telegram messages through python-telegram-bot, within Telegram's limits.

A leader duty (one sender per deployment): it reads `telegram_messages` in id order and sends
each, never faster than TELEGRAM_PER_CHAT_PER_S to one chat nor TELEGRAM_GLOBAL_PER_S overall,
honouring the `retry_after` of a 429. A 403 (the user blocked the bot) marks the binding
inactive.

"Once" for Telegram: the Bot API has no idempotency key, so a request that may have reached it
is never repeated. A message is marked `sending` (committed) before it goes out and `sent`
after. It is sent again only when the request certainly did not reach Telegram or Telegram
certainly did not post it: the connection could not be made (connect error or timeout, pool
timeout), or Telegram answered with an error (429 with its `retry_after`, 5xx, 400). When the
connection broke after the request was written (read timeout, reset), or the process died while
`sending` (kill -9), the message is marked `interrupted` and not sent again: it is in the chat
at most once, and the history (`GET /v1/tg/messages`) lists it as interrupted. A message split
in pieces resumes after the pieces that went out.
"""

import asyncio
import contextlib
import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

import httpx
from sqlalchemy import select, update
from telegram import Bot
from telegram.error import Forbidden, NetworkError, RetryAfter, TelegramError

from papertrade.context import AppContext
from papertrade.events import DomainEvent
from papertrade.kit.tasks import cancel_and_wait, cancel_requested, wait_up_to
from papertrade.kit.time import now_ms
from papertrade.models import TelegramBinding, TelegramMessage
from papertrade.tg.text import split

log = logging.getLogger("papertrade.telegram")
BATCH = 200
POLL_S = 2.0
MAX_ATTEMPTS = 5


@dataclass(slots=True)
class Outgoing:
    id: int
    chat_id: int
    text: str
    attempts: int


class Pace:
    """When the next message may go: per chat and overall (loop time, seconds)."""

    def __init__(self, per_chat_per_s: float, global_per_s: float):
        self.chat_gap = 1.0 / per_chat_per_s
        self.global_gap = 1.0 / global_per_s
        self.chat_next: dict[int, float] = {}
        self.global_next = 0.0

    def ready_at(self, chat_id: int) -> float:
        return max(self.chat_next.get(chat_id, 0.0), self.global_next)

    def sent(self, chat_id: int, at: float) -> None:
        self.chat_next[chat_id] = at + self.chat_gap
        self.global_next = at + self.global_gap

    def hold(self, chat_id: int, until: float) -> None:
        """Telegram said wait (429): this chat and, as the limit may be global, everyone."""
        self.chat_next[chat_id] = max(self.chat_next.get(chat_id, 0.0), until)
        self.global_next = max(self.global_next, until)


# httpx errors raised before any byte of the request left: the request never reached Telegram.
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


def certainly_not_sent(exc: TelegramError) -> bool:
    """Whether a failed send certainly did not reach Telegram (so sending again is safe)."""
    if not isinstance(exc, NetworkError):  # an error answer from the Bot API: not posted
        return True
    return isinstance(exc.__cause__, NOT_SENT) or "Request was *not* sent" in exc.message


def _wait_of(exc: RetryAfter) -> float:
    with warnings.catch_warnings():  # PTB 22 warns that this becomes a timedelta in 23
        warnings.simplefilter("ignore")
        value: int | float | timedelta = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class TelegramSender:
    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        settings = ctx.settings
        self.pace = Pace(settings.telegram_per_chat_per_s, settings.telegram_global_per_s)
        self.wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.sent = 0
        ctx.events.subscribe(self._on_events)

    @property
    def enabled(self) -> bool:
        return bool(self.ctx.settings.telegram_bot_token)

    async def _on_events(self, events: Sequence[DomainEvent]) -> None:
        if any(e.type == "telegram.queued" for e in events):
            self.wake.set()

    async def lead(self) -> None:
        if self.enabled and self._task is None:
            self._task = asyncio.create_task(self._run(), name="telegram-sender")

    async def follow(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            await cancel_and_wait(task)

    def bot(self) -> Bot:
        settings = self.ctx.settings
        assert settings.telegram_bot_token
        return Bot(settings.telegram_bot_token, base_url=settings.telegram_api_base_url)

    async def _run(self) -> None:
        async with self.ctx.transaction() as uow:  # a previous sender died mid-send
            await uow.session.execute(
                update(TelegramMessage)
                .where(TelegramMessage.status == "sending")
                .values(status="interrupted", error="the sender stopped while sending it")
            )
        bot = self.bot()
        try:
            while True:
                self.wake.clear()
                try:
                    handled = await self._send_batch(bot)
                except Exception:
                    if cancel_requested():
                        raise
                    log.exception("sending Telegram messages failed; retrying")
                    handled = 0
                    await asyncio.sleep(POLL_S)
                if handled == 0:
                    await wait_up_to(self.wake, POLL_S)
        finally:
            with contextlib.suppress(Exception):
                await bot.shutdown()

    async def _pending(self) -> list[Outgoing]:
        async with self.ctx.db.reader() as session:
            rows = await session.execute(
                select(
                    TelegramMessage.id,
                    TelegramMessage.chat_id,
                    TelegramMessage.text,
                    TelegramMessage.attempts,
                )
                .where(TelegramMessage.status == "pending")
                .order_by(TelegramMessage.id)
                .limit(BATCH)
            )
            return [Outgoing(r.id, r.chat_id, r.text, r.attempts) for r in rows]

    async def _send_batch(self, bot: Bot) -> int:
        waiting = await self._pending()
        loop = asyncio.get_running_loop()
        handled = 0
        while waiting:
            now = loop.time()
            # The oldest message whose chat may receive now (a chat's messages stay in order).
            seen: set[int] = set()
            ready = None
            for message in waiting:
                if message.chat_id not in seen:
                    seen.add(message.chat_id)
                    if self.pace.ready_at(message.chat_id) <= now:
                        ready = message
                        break
            if ready is None:
                soonest = min(self.pace.ready_at(m.chat_id) for m in waiting)
                await asyncio.sleep(max(0.0, soonest - now))
                continue
            outcome = await self._send_one(bot, ready)
            handled += 1
            if outcome == "retry":  # stays first in its chat's line
                continue
            waiting.remove(ready)
            if outcome in ("blocked", "error"):  # the rest of this chat waits for a new batch
                waiting = [m for m in waiting if m.chat_id != ready.chat_id]
        return handled

    async def _mark(self, message_id: int, **values: object) -> None:
        async with self.ctx.transaction() as uow:
            await uow.session.execute(
                update(TelegramMessage).where(TelegramMessage.id == message_id).values(**values)
            )

    async def _send_one(self, bot: Bot, message: Outgoing) -> str:
        """Send one message: sent, retry (429), blocked (403) or error."""
        loop = asyncio.get_running_loop()
        attempts = message.attempts + 1
        await self._mark(message.id, status="sending", attempts=attempts)
        pieces = split(message.text)
        done = 0
        try:
            for index, piece in enumerate(pieces):
                if index:  # each piece is a message for the limits too
                    await asyncio.sleep(max(0.0, self.pace.ready_at(message.chat_id) - loop.time()))
                await bot.send_message(message.chat_id, piece, parse_mode="HTML")
                done += 1
                self.pace.sent(message.chat_id, loop.time())
                self.sent += 1
        except RetryAfter as exc:
            wait = _wait_of(exc)
            self.pace.hold(message.chat_id, loop.time() + wait)
            log.warning("Telegram asked to wait %.0f s (429)", wait)
            rest = self._rest(message, pieces, done)
            await self._mark(
                message.id, status="pending", error=f"429: retry after {wait:g} s", **rest
            )
            message.attempts = attempts
            return "retry"
        except Forbidden as exc:
            await self._blocked(message, str(exc))
            return "blocked"
        except TelegramError as exc:
            if not certainly_not_sent(exc):
                await self._mark(
                    message.id,
                    status="interrupted",
                    error=f"the connection broke after the request was sent ({exc}); "
                    "perhaps delivered, not sent again"[:300],
                )
                return "error"
            status = "failed" if attempts >= MAX_ATTEMPTS else "pending"
            self.pace.hold(message.chat_id, loop.time() + 2.0**attempts)
            rest = self._rest(message, pieces, done)
            await self._mark(message.id, status=status, error=str(exc)[:300], **rest)
            return "error"
        await self._mark(message.id, status="sent", sent_at=now_ms(), error="")
        return "sent"

    @staticmethod
    def _rest(message: Outgoing, pieces: list[str], done: int) -> dict[str, str]:
        """After some pieces went out, only the others are sent again."""
        if not done:
            return {}
        message.text = "\n".join(pieces[done:])
        return {"text": message.text}

    async def _blocked(self, message: Outgoing, reason: str) -> None:
        """The user blocked the bot (403): the binding goes inactive, nothing more is sent."""
        async with self.ctx.transaction() as uow:
            now = uow.now()
            await uow.session.execute(
                update(TelegramMessage)
                .where(TelegramMessage.id == message.id)
                .values(status="blocked", error=reason[:300])
            )
            await uow.session.execute(
                update(TelegramMessage)
                .where(
                    TelegramMessage.chat_id == message.chat_id,
                    TelegramMessage.status == "pending",
                )
                .values(status="blocked", error="the bot is blocked in this chat")
            )
            await uow.session.execute(
                update(TelegramBinding)
                .where(TelegramBinding.chat_id == message.chat_id)
                .values(status="inactive", inactive_since=now)
            )
