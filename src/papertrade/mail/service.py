"""Queueing mail, and the unsubscribe links of non-transactional mail.

An unsubscribe link names the user and the kind and is signed with the deployment's secret
(HMAC-SHA256), so it works without signing in and cannot be forged for someone else.
"""

import hashlib
import hmac
from collections.abc import Iterable, Sequence

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.mail.events import MailQueued
from papertrade.models import EmailDigest, EmailMessage, EmailSuppression, User
from papertrade.uow import AnyWork, AsyncWork

ALL_KINDS = "all"
# B4: at most this many notification mails an hour per user; the rest are held and go out
# together in one mail an hour later (mail/digest.py send_held). Per user rather than per
# subscription: a mailbox suffers the total, whichever portfolios it follows.
HOURLY_LIMIT = 20
HOUR_MS = 3_600_000
HELD, DIGESTED = "held", "digested"  # statuses of a held mail, before and after its digest


class _Announced:
    done = False


def queue(
    uow: AnyWork,
    to_address: str,
    subject: str,
    body: str,
    *,
    user_id: int | None = None,
    kind: str = "",
    transactional: bool = False,
    notification_id: int | None = None,
    held: bool = False,
) -> None:
    """Queue a plain-text mail; the sender sends it after this unit of work commits. A held
    mail is not sent: it waits for the digest of held mail."""
    uow.session.add(
        EmailMessage(
            to_address=to_address,
            user_id=user_id,
            notification_id=notification_id,
            subject=subject[:200],
            body=body,
            transactional=transactional,
            kind=kind,
            status=HELD if held else "pending",
            attempts=0,
            error="",
            created_at=uow.now(),
        )
    )
    announced = uow.part(_Announced)
    if not held and not announced.done:
        announced.done = True
        uow.emit(MailQueued())


async def suppressed(uow: AsyncWork, addresses: Sequence[str]) -> set[str]:
    found: set[str] = set()
    unique = sorted(set(addresses))
    for start in range(0, len(unique), 5000):
        rows = await uow.session.scalars(
            select(EmailSuppression.address).where(
                EmailSuppression.address.in_(unique[start : start + 5000])
            )
        )
        found.update(rows)
    return found


async def frequency_of(session: AsyncSession, user_id: int) -> str:
    """instant (the default), daily (mail/digest.py) or off."""
    row = await session.get(EmailDigest, user_id)
    return row.frequency if row is not None else "instant"


async def not_instant(session: AsyncSession, user_ids: Iterable[int]) -> set[int]:
    """Users who get no per-notification mail: they chose the daily digest (mail/digest.py)
    or no notification mail at all."""
    users = sorted(set(user_ids))
    found: set[int] = set()
    for start in range(0, len(users), 5000):
        rows = await session.scalars(
            select(EmailDigest.user_id).where(
                EmailDigest.user_id.in_(users[start : start + 5000]),
                EmailDigest.frequency != "instant",
            )
        )
        found.update(rows)
    return found


async def queue_notifications(
    uow: AsyncWork, items: Sequence[tuple[int, int | None, str, str, str]]
) -> int:
    """Mail (user_id, notification_id, kind, title, body) to each user's address, except
    suppressed ones and users who chose the daily digest (or no mail); past a user's
    HOURLY_LIMIT the mail is held for the digest of held mail. Returns how many were queued."""
    users = sorted({item[0] for item in items})
    later = await not_instant(uow.session, users)
    users = [u for u in users if u not in later]
    emails: dict[int, str] = {}
    for start in range(0, len(users), 5000):
        rows = await uow.session.execute(
            select(User.id, User.email).where(User.id.in_(users[start : start + 5000]))
        )
        emails.update({row.id: row.email for row in rows})
    blocked = await suppressed(uow, list(emails.values()))
    sent = await _mailed_last_hour(uow, list(emails), uow.now())
    queued = 0
    for user_id, notification_id, kind, title, body in items:
        address = emails.get(user_id)
        if address is None or address in blocked:
            continue
        held = sent.get(user_id, 0) >= HOURLY_LIMIT
        sent[user_id] = sent.get(user_id, 0) + 1
        queue(
            uow,
            address,
            title,
            body,
            user_id=user_id,
            kind=kind,
            notification_id=notification_id,
            held=held,
        )
        queued += 1
    return queued


async def _mailed_last_hour(uow: AsyncWork, users: list[int], now: int) -> dict[int, int]:
    """Notification mail (digests included) queued for each user in the last hour, held
    mail not counted."""
    counts: dict[int, int] = {}
    for start in range(0, len(users), 5000):
        rows = await uow.session.execute(
            select(EmailMessage.user_id, func.count())
            .where(
                EmailMessage.user_id.in_(users[start : start + 5000]),
                EmailMessage.transactional.is_(False),
                EmailMessage.created_at > now - HOUR_MS,
                EmailMessage.status.not_in((HELD, DIGESTED)),
            )
            .group_by(EmailMessage.user_id)
        )
        for user_id, count in rows:
            if user_id is not None:  # never: the query names users
                counts[user_id] = count
    return counts


def _signature(secret: str, user_id: int, kind: str) -> str:
    message = f"unsubscribe\n{user_id}\n{kind}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:32]


def unsubscribe_token(secret: str, user_id: int, kind: str) -> str:
    return f"{user_id}.{kind}.{_signature(secret, user_id, kind)}"


def read_unsubscribe_token(secret: str, token: str) -> tuple[int, str] | None:
    """(user_id, kind) of a genuine token, else None."""
    user, _, rest = token.partition(".")
    kind, _, signature = rest.rpartition(".")
    if not (user.isascii() and user.isdigit()) or len(user) > 10 or not kind:
        return None
    expected = _signature(secret, int(user), kind)
    return (int(user), kind) if hmac.compare_digest(expected, signature) else None


def unsubscribe_url(base_url: str, secret: str, user_id: int, kind: str) -> str:
    token = unsubscribe_token(secret, user_id, kind)
    return f"{base_url.rstrip('/')}/v1/email/unsubscribe?token={token}"
