"""The inbox: putting notifications in, listing them, marking them read, preferences, pruning.

`notify_many` is how any area tells users something: it honours each user's choice of channels
(the inbox today) and announces the new rows so open sockets show them.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, delete, func, insert, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.errors import NotFound, ValidationFailed
from papertrade.mail import service as mail_service
from papertrade.models import Notification, NotificationPreference
from papertrade.notifications.catalogue import BY_NAME, KINDS
from papertrade.notifications.events import NotificationsCreated
from papertrade.notifications.kinds import Channels, Message
from papertrade.tg import service as tg_service
from papertrade.uow import AsyncWork

RETENTION_MS = 90 * 86_400_000
CHUNK = 5000  # ids per IN (…): under every driver's limit on bound parameters
_TABLE = cast(Table, Notification.__table__)


@dataclass(frozen=True, slots=True)
class Pending:
    """A notification on its way into one user's inbox."""

    user_id: int
    kind: str
    message: Message
    portfolio_id: int | None = None
    event_id: int | None = None


def kind_named(name: str) -> str:
    if name not in BY_NAME:
        raise ValidationFailed(
            f"Unknown notification kind {name[:40]!r}; kinds are {', '.join(BY_NAME)}.",
            code="unknown_notification_kind",
        )
    return name


def view(row: Notification) -> dict[str, Any]:
    return {
        "id": row.id,
        "kind": row.kind,
        "title": row.title,
        "body": row.body,
        "data": row.data,
        "portfolio_id": row.portfolio_id,
        "link": row.data.get("link") if isinstance(row.data, dict) else None,
        "created_at": row.created_at,
        "read_at": row.read_at,
    }


# -- preferences -------------------------------------------------------------------------------


async def channels_of(
    session: AsyncSession, user_ids: Iterable[int], kinds: Iterable[str]
) -> dict[tuple[int, str], Channels]:
    """The channels each (user, kind) chose; pairs absent from the result use the defaults."""
    found: dict[tuple[int, str], Channels] = {}
    users, wanted = sorted(set(user_ids)), sorted(set(kinds))
    for start in range(0, len(users), CHUNK):
        rows = await session.scalars(
            select(NotificationPreference).where(
                NotificationPreference.user_id.in_(users[start : start + CHUNK]),
                NotificationPreference.kind.in_(wanted),
            )
        )
        for row in rows:
            found[(row.user_id, row.kind)] = Channels(row.inbox, row.telegram, row.email)
    return found


async def preferences(session: AsyncSession, user_id: int) -> list[dict[str, Any]]:
    """Every kind with the user's channels and the defaults."""
    chosen = await channels_of(session, [user_id], BY_NAME)
    return [
        {
            "kind": kind.name,
            "description": kind.description,
            **chosen.get((user_id, kind.name), kind.defaults).as_dict(),
            "defaults": kind.defaults.as_dict(),
            "always": sorted(kind.always),
        }
        for kind in KINDS
    ]


async def set_preferences(
    uow: AsyncWork, user_id: int, changes: dict[str, dict[str, bool]]
) -> list[dict[str, Any]]:
    """Change some channels of some kinds; what is not named keeps its value."""
    session = uow.session
    for name, channels in changes.items():
        kind = BY_NAME[kind_named(name)]
        for channel in sorted(kind.always):
            if channels.get(channel) is False:
                raise ValidationFailed(
                    f"{name} notifications always go to the {channel}; it cannot be turned off.",
                    code="channel_required",
                )
    chosen = await channels_of(session, [user_id], changes)
    for name, channels in changes.items():
        current = chosen.get((user_id, name), BY_NAME[name].defaults).as_dict()
        current.update(channels)
        row = await session.get(NotificationPreference, (user_id, name))
        if row is None:
            session.add(NotificationPreference(user_id=user_id, kind=name, **current))
        else:
            row.inbox, row.telegram, row.email = (
                current["inbox"],
                current["telegram"],
                current["email"],
            )
    await session.flush()
    return await preferences(session, user_id)


# -- putting notifications in ------------------------------------------------------------------


async def deliver(uow: AsyncWork, pending: Sequence[Pending]) -> int:
    """Send each pending notification to the channels its user chose for its kind: a row in
    their inbox, a queued Telegram message (tg/). Returns how many went into inboxes. Database
    work only: safe inside an outbox consumer, and done in its transaction (so exactly once)."""
    if not pending:
        return 0
    chosen = await channels_of(uow.session, (p.user_id for p in pending), (p.kind for p in pending))
    routes = [
        _allowed(chosen.get((p.user_id, p.kind), BY_NAME[p.kind].defaults), p.message.channels)
        for p in pending
    ]
    now = uow.now()
    boxed = [p for p, channels in zip(pending, routes, strict=True) if channels.inbox]
    rows = [
        {
            "user_id": p.user_id,
            "kind": p.kind,
            "title": p.message.title[:200],
            "body": p.message.body[:4000],
            "data": dict(p.message.data),
            "portfolio_id": p.portfolio_id,
            "event_id": p.event_id,
            "created_at": now,
            "read_at": None,
        }
        for p in boxed
    ]
    ids: dict[int, int] = {}  # id(pending) → its notification's id
    if rows:
        ids = await _insert(uow, boxed, rows)
        shown = [
            {"id": ids[id(p)], **{k: v for k, v in row.items() if k != "event_id"}}
            for p, row in zip(boxed, rows, strict=True)
        ]
        uow.emit(NotificationsCreated(notifications=shown))
    to_telegram = [
        (p.user_id, ids.get(id(p)), p.message.title, p.message.body, p.message.telegram)
        for p, channels in zip(pending, routes, strict=True)
        if channels.telegram
    ]
    if to_telegram:
        await tg_service.queue_notifications(uow, to_telegram)
    to_email = [
        (p.user_id, ids.get(id(p)), p.kind, p.message.title, p.message.body)
        for p, channels in zip(pending, routes, strict=True)
        if channels.email
    ]
    if to_email:
        await mail_service.queue_notifications(uow, to_email)
    return len(rows)


def _allowed(chosen: Channels, allowed: frozenset[str] | None) -> Channels:
    """The user's channels for a kind, within those the message's source allows."""
    if allowed is None:
        return chosen
    return Channels(
        inbox=chosen.inbox and "inbox" in allowed,
        telegram=chosen.telegram and "telegram" in allowed,
        email=chosen.email and "email" in allowed,
    )


async def _insert(
    uow: AsyncWork, boxed: Sequence[Pending], rows: list[dict[str, Any]]
) -> dict[int, int]:
    """Insert the rows in batched statements; id(pending) → its notification's id.

    RETURNING in parameter order (sort_by_parameter_order) makes SQLite insert one row per
    statement, which was most of the inbox consumer's cost; the returned rows are matched back by
    what tells them apart instead (rows that match alike are alike, so either id will do)."""
    inserted = await uow.session.execute(
        insert(_TABLE).returning(_TABLE.c.id, _TABLE.c.user_id, _TABLE.c.event_id, _TABLE.c.title),
        rows,
    )
    found: dict[tuple[int, int | None, str], list[int]] = {}
    for row_id, user_id, event_id, title in inserted.all():
        found.setdefault((user_id, event_id, title), []).append(row_id)
    return {
        id(p): found[(r["user_id"], r["event_id"], r["title"])].pop()
        for p, r in zip(boxed, rows, strict=True)
    }


async def notify_many(
    uow: AsyncWork,
    user_ids: Iterable[int],
    kind: str,
    message: Message,
    *,
    portfolio_id: int | None = None,
) -> int:
    """Tell each of `user_ids` the same thing (a signal to its subscribers, an announcement)."""
    kind_named(kind)
    return await deliver(
        uow, [Pending(uid, kind, message, portfolio_id) for uid in dict.fromkeys(user_ids)]
    )


# -- reading and marking -----------------------------------------------------------------------


async def page(
    session: AsyncSession,
    user_id: int,
    *,
    kind: str | None,
    unread: bool | None,
    before_id: int | None,
    limit: int,
) -> list[Notification]:
    """The user's notifications, newest first; `before_id` pages backwards."""
    statement = select(Notification).where(Notification.user_id == user_id)
    if kind is not None:
        statement = statement.where(Notification.kind == kind_named(kind))
    if unread is True:
        statement = statement.where(Notification.read_at.is_(None))
    elif unread is False:
        statement = statement.where(Notification.read_at.is_not(None))
    if before_id is not None:
        statement = statement.where(Notification.id < before_id)
    rows = await session.scalars(statement.order_by(Notification.id.desc()).limit(limit))
    return list(rows)


async def unread_count(session: AsyncSession, user_id: int) -> int:
    count = await session.scalar(
        select(func.count())
        .select_from(Notification)
        .where(Notification.user_id == user_id, Notification.read_at.is_(None))
    )
    return int(count or 0)


async def owned(session: AsyncSession, user_id: int, notification_id: int) -> Notification:
    row = await session.get(Notification, notification_id)
    if row is None or row.user_id != user_id:
        raise NotFound("Notification not found.", code="notification_not_found")
    return row


async def mark_read(uow: AsyncWork, user_id: int, notification_id: int) -> Notification:
    row = await owned(uow.session, user_id, notification_id)
    if row.read_at is None:
        row.read_at = uow.now()
    return row


async def mark_all_read(uow: AsyncWork, user_id: int, kind: str | None) -> int:
    """Mark every unread notification (of one kind, if named) read; returns how many."""
    statement = update(Notification).where(
        Notification.user_id == user_id, Notification.read_at.is_(None)
    )
    if kind is not None:
        statement = statement.where(Notification.kind == kind_named(kind))
    result = await uow.session.execute(statement.values(read_at=uow.now()))
    return int(getattr(result, "rowcount", 0) or 0)


async def remove(uow: AsyncWork, user_id: int, notification_id: int) -> Notification:
    row = await owned(uow.session, user_id, notification_id)
    await uow.session.delete(row)
    return row


async def prune(uow: AsyncWork) -> int:
    """Delete notifications older than the retention (90 days)."""
    horizon = uow.now() - RETENTION_MS
    result = await uow.session.execute(
        delete(Notification).where(Notification.created_at < horizon)
    )
    return int(getattr(result, "rowcount", 0) or 0)
