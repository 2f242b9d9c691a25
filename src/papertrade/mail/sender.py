"""Sends queued mail over SMTP with aiosmtplib (a leader duty: one sender per deployment).

Like the Telegram sender, a message is marked `sending` (committed) before it goes out and
`sent` after; one left `sending` by a crash is marked `interrupted`, not sent again. A
non-transactional message whose address was suppressed after it was queued is not sent
(`suppressed`). SMTP errors are retried up to 5 times with a growing pause.
"""

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from email.message import EmailMessage as MimeMessage

import aiosmtplib
from sqlalchemy import select, update

from papertrade.context import AppContext
from papertrade.events import DomainEvent
from papertrade.kit.tasks import cancel_requested
from papertrade.kit.time import now_ms
from papertrade.mail import service
from papertrade.models import EmailMessage, EmailSuppression

log = logging.getLogger("papertrade.mail")
BATCH = 100
POLL_S = 2.0
MAX_ATTEMPTS = 5


class MailSender:
    def __init__(self, ctx: AppContext):
        self.ctx = ctx
        self.wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._retry_at: dict[int, float] = {}
        ctx.events.subscribe(self._on_events)

    @property
    def enabled(self) -> bool:
        return bool(self.ctx.settings.smtp_host)

    async def _on_events(self, events: Sequence[DomainEvent]) -> None:
        if any(e.type == "mail.queued" for e in events):
            self.wake.set()

    async def lead(self) -> None:
        if self.enabled and self._task is None:
            self._task = asyncio.create_task(self._run(), name="mail-sender")

    async def follow(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        async with self.ctx.transaction() as uow:
            await uow.session.execute(
                update(EmailMessage)
                .where(EmailMessage.status == "sending")
                .values(status="interrupted", error="the sender stopped while sending it")
            )
        while True:
            self.wake.clear()
            try:
                sent = await self._send_batch()
            except Exception:
                if cancel_requested():
                    raise
                log.exception("sending mail failed; retrying")
                sent = 0
            if sent == 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), POLL_S)

    async def _send_batch(self) -> int:
        loop = asyncio.get_running_loop()
        async with self.ctx.db.reader() as session:
            rows = list(
                await session.scalars(
                    select(EmailMessage)
                    .where(EmailMessage.status == "pending")
                    .order_by(EmailMessage.id)
                    .limit(BATCH)
                )
            )
        handled = 0
        for row in rows:
            if self._retry_at.get(row.id, 0.0) > loop.time():
                continue
            await self._send_one(row)
            handled += 1
        return handled

    async def _mark(self, message_id: int, **values: object) -> None:
        async with self.ctx.transaction() as uow:
            await uow.session.execute(
                update(EmailMessage).where(EmailMessage.id == message_id).values(**values)
            )

    def compose(self, row: EmailMessage) -> MimeMessage:
        settings = self.ctx.settings
        mime = MimeMessage()
        mime["From"] = settings.email_from
        mime["To"] = row.to_address
        mime["Subject"] = row.subject
        body = row.body
        if not row.transactional and row.user_id is not None:
            secret = settings.resolved_secret_key()
            one = service.unsubscribe_url(
                settings.public_base_url, secret, row.user_id, row.kind or service.ALL_KINDS
            )
            every = service.unsubscribe_url(
                settings.public_base_url, secret, row.user_id, service.ALL_KINDS
            )
            body += f"\n\n--\nStop these emails: {one}\nStop all emails from Papertrade: {every}\n"
            mime["List-Unsubscribe"] = f"<{one}>"
            mime["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"  # RFC 8058
        mime.set_content(body)
        return mime

    async def _send_one(self, row: EmailMessage) -> None:
        if not row.transactional:
            async with self.ctx.db.reader() as session:
                if await session.get(EmailSuppression, row.to_address) is not None:
                    await self._mark(row.id, status="suppressed")
                    return
        attempts = row.attempts + 1
        await self._mark(row.id, status="sending", attempts=attempts)
        settings = self.ctx.settings
        try:
            await aiosmtplib.send(
                self.compose(row),
                hostname=settings.smtp_host,
                port=settings.smtp_port,
                username=settings.smtp_username,
                password=settings.smtp_password,
                start_tls=settings.smtp_starttls and not settings.smtp_tls,
                use_tls=settings.smtp_tls,
                timeout=30,
            )
        except (aiosmtplib.SMTPException, OSError) as exc:
            status = "failed" if attempts >= MAX_ATTEMPTS else "pending"
            self._retry_at[row.id] = asyncio.get_running_loop().time() + 2.0**attempts
            await self._mark(row.id, status=status, error=str(exc)[:300])
            return
        self._retry_at.pop(row.id, None)
        await self._mark(row.id, status="sent", sent_at=now_ms(), error="")
