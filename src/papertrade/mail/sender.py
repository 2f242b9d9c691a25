"""Sends queued mail over SMTP with aiosmtplib (a leader duty: one sender per deployment).

"Once" for SMTP: a message is handed over to the SMTP server only by the server's 250 answer
to the DATA command. Each send is split in two committed phases so that a crash (kill -9) in
the first can be told from one in the second:

- `sending`: connecting, MAIL FROM, RCPT TO. The server cannot deliver a message whose content
  it never received, so a row left `sending` by a crash certainly was not handed over: the next
  sender puts it back to `pending` and sends it (again with the same Message-ID).
- `handover`: committed just before DATA. A row left here by a crash may or may not have been
  accepted, so it is marked `interrupted` and not sent again (listed with its status in
  `GET /v1/user/email/messages`). The window is one DATA round trip.

Every message carries a Message-ID made from its row (`<mail-<id>.<created_at>@<domain>>`), so
a copy that went out twice, whatever the cause, is recognisably the same message to the
receiving side. A non-transactional message whose address was suppressed after it was queued
is not sent (`suppressed`). SMTP errors before DATA are retried up to 5 times with a growing
pause.
"""

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from email.message import EmailMessage as MimeMessage
from email.utils import parseaddr

import aiosmtplib
from sqlalchemy import select, update

from papertrade.context import AppContext
from papertrade.events import DomainEvent
from papertrade.kit.tasks import cancel_and_wait, cancel_requested, wait_up_to
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
            await cancel_and_wait(task)

    async def recover(self) -> None:
        """What a previous sender left mid-send (it crashed): see the module's docstring."""
        async with self.ctx.transaction() as uow:
            await uow.session.execute(
                update(EmailMessage)
                .where(EmailMessage.status == "sending")
                .values(status="pending", error="the sender stopped before handing it over")
            )
            await uow.session.execute(
                update(EmailMessage)
                .where(EmailMessage.status == "handover")
                .values(
                    status="interrupted",
                    error="the sender stopped while handing it over; perhaps delivered, "
                    "not sent again",
                )
            )

    async def _run(self) -> None:
        await self.recover()
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
                await wait_up_to(self.wake, POLL_S)

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
        mime["Message-ID"] = message_id(row, settings.email_from)
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
        smtp = aiosmtplib.SMTP(
            hostname=settings.smtp_host,
            port=settings.smtp_port,
            username=settings.smtp_username,
            password=settings.smtp_password,
            start_tls=settings.smtp_starttls and not settings.smtp_tls,
            use_tls=settings.smtp_tls,
            timeout=30,
        )
        handing_over = False
        try:
            mime = self.compose(row)
            await smtp.connect()
            await smtp.mail(parseaddr(settings.email_from)[1])
            await smtp.rcpt(row.to_address)
            await self._mark(row.id, status="handover")
            handing_over = True
            await smtp.data(mime.as_bytes())
        except (aiosmtplib.SMTPException, OSError, UnicodeError) as exc:
            # UnicodeError: an address the server cannot take in ASCII; it fails, retried.
            if handing_over and not isinstance(exc, aiosmtplib.SMTPResponseException):
                # The connection broke during DATA: the server may have accepted it.
                await self._mark(row.id, status="interrupted", error=str(exc)[:300])
                return
            status = "failed" if attempts >= MAX_ATTEMPTS else "pending"
            self._retry_at[row.id] = asyncio.get_running_loop().time() + 2.0**attempts
            await self._mark(row.id, status=status, error=str(exc)[:300])
            return
        finally:
            with contextlib.suppress(Exception):
                await smtp.quit()
        self._retry_at.pop(row.id, None)
        await self._mark(row.id, status="sent", sent_at=now_ms(), error="")


def message_id(row: EmailMessage, email_from: str) -> str:
    """The message's stable Message-ID (RFC 5322): the same on every attempt."""
    domain = parseaddr(email_from)[1].rpartition("@")[2] or "papertrade.invalid"
    return f"<mail-{row.id}.{row.created_at}@{domain}>"
