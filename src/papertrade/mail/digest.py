"""Email digests: a user who sets their notification mail to `daily` gets, instead of one mail
per notification, one mail a day listing their unread notifications of the kinds they chose to
get by email (`PUT /v1/inbox/preferences`). `off` stops notification mail altogether.

The scheduled job `mail.digest` (every 15 minutes, in the leader) finds the users whose last
digest is 24 hours old or more and, for each, in one transaction, queues the mail and moves
`last_sent_at`: a crash or a second run never sends a day's digest twice. A digest lists what
arrived since the previous one (the last 24 hours the first time) and is still unread; with
nothing to list, no mail is sent. Suppressed addresses get none (their day still counts). Like
every notification mail it carries the unsubscribe links (the digest's own turns mail `off`).
The digest is made from the inbox: a kind whose inbox channel is off is not in it.

Instant mail past the hourly limit (mail/service.py HOURLY_LIMIT, B4) is held, not sent. The
same job sends a user's held mail as one mail once the oldest of it is an hour old (so within
an hour and a quarter), and marks it `digested` in the same transaction; a user who meanwhile
chose the daily digest or no mail gets none of it by mail.
"""

from datetime import UTC, datetime

from sqlalchemy import func, or_, select

from papertrade.mail import service as mail_service
from papertrade.models import EmailDigest, EmailMessage, EmailSuppression, Notification, User
from papertrade.notifications.catalogue import BY_NAME
from papertrade.notifications.service import channels_of
from papertrade.uow import AsyncWork

DAY_MS = 86_400_000
KIND = "digest"  # the unsubscribe link's kind
FREQUENCIES = ("instant", "daily", "off")
MAX_LISTED = 50
BATCH = 200


async def set_frequency(uow: AsyncWork, user_id: int, frequency: str) -> str:
    row = await uow.session.get(EmailDigest, user_id, with_for_update=True)
    if row is None:
        uow.session.add(EmailDigest(user_id=user_id, frequency=frequency, last_sent_at=None))
    elif row.frequency != frequency:
        row.frequency = frequency
        if frequency == "daily":  # the first digest covers the day from now on
            row.last_sent_at = None
    return frequency


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def compose(notes: list[Notification], base_url: str) -> tuple[str, str]:
    """(subject, plain-text body) of a digest."""
    count = len(notes)
    subject = f"Papertrade: {count} unread notification{'s' if count != 1 else ''} today"
    lines = [f"You have {count} unread notification{'s' if count != 1 else ''}:", ""]
    for note in notes[:MAX_LISTED]:
        lines.append(f"- {note.title} ({_when(note.created_at)})")
        if note.body:
            first = note.body.splitlines()[0] if note.body.strip() else ""
            lines.append(f"  {first[:300]}")
    if count > MAX_LISTED:
        lines.append(f"… and {count - MAX_LISTED} more.")
    lines += ["", f"Read them all: {base_url.rstrip('/')}/app/inbox"]
    return subject, "\n".join(lines)


async def send_due(uow: AsyncWork, base_url: str) -> dict[str, int]:
    """Queue the digests that are due (at most BATCH users per run; the next run does more)."""
    now = uow.now()
    session = uow.session
    due = list(
        await session.scalars(
            select(EmailDigest)
            .where(
                EmailDigest.frequency == "daily",
                or_(EmailDigest.last_sent_at.is_(None), EmailDigest.last_sent_at <= now - DAY_MS),
            )
            .order_by(EmailDigest.user_id)
            .limit(BATCH)
            .with_for_update(skip_locked=True)
        )
    )
    sent = skipped = empty = 0
    for row in due:
        since = row.last_sent_at if row.last_sent_at is not None else now - DAY_MS
        row.last_sent_at = now
        address = await session.scalar(select(User.email).where(User.id == row.user_id))
        if address is None or await session.get(EmailSuppression, address) is not None:
            skipped += 1
            continue
        notes = list(
            await session.scalars(
                select(Notification)
                .where(
                    Notification.user_id == row.user_id,
                    Notification.read_at.is_(None),
                    Notification.created_at > since,
                )
                .order_by(Notification.id.desc())
                .limit(1000)
            )
        )
        chosen = await channels_of(session, [row.user_id], {n.kind for n in notes})
        mailed = [
            n
            for n in notes
            if n.kind in BY_NAME
            and chosen.get((row.user_id, n.kind), BY_NAME[n.kind].defaults).email
        ]
        if not mailed:
            empty += 1
            continue
        subject, body = compose(mailed, base_url)
        mail_service.queue(uow, address, subject, body, user_id=row.user_id, kind=KIND)
        sent += 1
    return {"sent": sent, "suppressed": skipped, "nothing_unread": empty}


def compose_held(held: list[EmailMessage], base_url: str) -> tuple[str, str]:
    """(subject, plain-text body) of the mail that carries held notification mail."""
    count = len(held)
    subject = f"Papertrade: {count} more notification{'s' if count != 1 else ''}"
    lines = [
        f"More than {mail_service.HOURLY_LIMIT} notifications arrived within an hour, so these "
        f"{count} come together:",
        "",
    ]
    for mail in held[:MAX_LISTED]:
        lines.append(f"- {mail.subject} ({_when(mail.created_at)})")
        first = mail.body.splitlines()[0] if mail.body.strip() else ""
        if first:
            lines.append(f"  {first[:300]}")
    if count > MAX_LISTED:
        lines.append(f"… and {count - MAX_LISTED} more.")
    lines += ["", f"All of them are in your inbox: {base_url.rstrip('/')}/app/inbox"]
    return subject, "\n".join(lines)


async def send_held(uow: AsyncWork, base_url: str) -> int:
    """Send each user's held mail as one, once the oldest of it is an hour old (BATCH users per
    run); returns how many such mails were queued."""
    session = uow.session
    now = uow.now()
    users = list(
        await session.scalars(
            select(EmailMessage.user_id)
            .where(EmailMessage.status == mail_service.HELD)
            .group_by(EmailMessage.user_id)
            .having(func.min(EmailMessage.created_at) <= now - mail_service.HOUR_MS)
            .order_by(EmailMessage.user_id)
            .limit(BATCH)
        )
    )
    sent = 0
    for user_id in filter(None, users):
        held = list(
            await session.scalars(
                select(EmailMessage)
                .where(EmailMessage.user_id == user_id, EmailMessage.status == mail_service.HELD)
                .order_by(EmailMessage.id)
                .with_for_update(skip_locked=True)
            )
        )
        if not held:  # another process took them
            continue
        for mail in held:
            mail.status = mail_service.DIGESTED
        address = held[-1].to_address
        if await session.get(EmailSuppression, address) is not None:
            continue
        if await mail_service.frequency_of(session, user_id) != "instant":
            continue  # switched to the daily digest (which lists what is unread) or to no mail
        subject, body = compose_held(held, base_url)
        mail_service.queue(uow, address, subject, body, user_id=user_id, kind=KIND)
        sent += 1
    return sent
