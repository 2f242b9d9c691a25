"""/v1/inbox: the user's notifications and the channels each kind goes to."""

from typing import Annotated

from fastapi import APIRouter, Query

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.kit.ids import Id
from papertrade.notifications import service
from papertrade.notifications.schemas import (
    Marked,
    NotificationPage,
    NotificationRead,
    Preferences,
    PreferencesUpdate,
    ReadAll,
    UnreadCount,
)

router = APIRouter(tags=["inbox"])


@router.get("/inbox", response_model=NotificationPage)
async def list_notifications(
    principal: Caller,
    ctx: Ctx,
    kind: Annotated[str | None, Query(max_length=40)] = None,
    unread: bool | None = None,
    before_id: Id | None = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> NotificationPage:
    """The caller's notifications, newest first, paged with `before_id`; `kind` and `unread`
    filter."""
    async with ctx.db.reader() as session:
        rows = await service.page(
            session, principal.user_id, kind=kind, unread=unread, before_id=before_id, limit=limit
        )
        unread_count = await service.unread_count(session, principal.user_id)
        items = [NotificationRead.model_validate(service.view(r)) for r in rows]
    return NotificationPage(
        notifications=items,
        unread_count=unread_count,
        next_before_id=items[-1].id if len(items) == limit else None,
    )


@router.get("/inbox/unread_count", response_model=UnreadCount)
async def count_unread(principal: Caller, ctx: Ctx) -> UnreadCount:
    """How many notifications are unread (the bell's number)."""
    async with ctx.db.reader() as session:
        return UnreadCount(unread_count=await service.unread_count(session, principal.user_id))


@router.get("/inbox/preferences", response_model=Preferences)
async def get_preferences(principal: Caller, ctx: Ctx) -> Preferences:
    """Every kind of notification and the channels it goes to (inbox, telegram, email)."""
    async with ctx.db.reader() as session:
        return Preferences.model_validate(
            {"preferences": await service.preferences(session, principal.user_id)}
        )


@router.put("/inbox/preferences", response_model=Preferences)
async def set_preferences(body: PreferencesUpdate, principal: Writer, ctx: Ctx) -> Preferences:
    """Turn channels of some kinds on or off; what is not named keeps its value."""
    changes = {
        kind: choice.model_dump(exclude_none=True) for kind, choice in body.preferences.items()
    }
    async with ctx.transaction() as uow:
        rows = await service.set_preferences(uow, principal.user_id, changes)
    return Preferences.model_validate({"preferences": rows})


@router.post("/inbox/read_all", response_model=Marked)
async def read_all(body: ReadAll, principal: Writer, ctx: Ctx) -> Marked:
    """Mark every unread notification read (only those of `kind`, when given)."""
    async with ctx.transaction() as uow:
        return Marked(marked=await service.mark_all_read(uow, principal.user_id, body.kind))


@router.post("/inbox/{notification_id}/read", response_model=NotificationRead)
async def read_one(notification_id: Id, principal: Writer, ctx: Ctx) -> NotificationRead:
    """Mark one notification read (again is harmless: the first time is kept)."""
    async with ctx.transaction() as uow:
        row = await service.mark_read(uow, principal.user_id, notification_id)
        return NotificationRead.model_validate(service.view(row))


@router.delete("/inbox/{notification_id}", response_model=NotificationRead)
async def delete_notification(notification_id: Id, principal: Writer, ctx: Ctx) -> NotificationRead:
    """Delete one notification; it is gone from every list."""
    async with ctx.transaction() as uow:
        row = await service.remove(uow, principal.user_id, notification_id)
        return NotificationRead.model_validate(service.view(row))
