"""The inbox's outbox consumer: durable events become notifications, once each.

It runs in the unit of work that moves its outbox cursor (docs/architecture.md), so a kill -9
at any point neither loses a notification nor makes a second one. The unique (user, event)
key of the table says the same thing to the database.
"""

from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import select

from papertrade.context import AppContext
from papertrade.models import Portfolio
from papertrade.models.portfolio import code_of
from papertrade.notifications import service
from papertrade.notifications.catalogue import BY_EVENT
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.tg import text
from papertrade.uow import AsyncWork


async def notify(uow: AsyncWork, events: Sequence[StoredEvent], base_url: str) -> None:
    """Turn `events` into notifications; `base_url` (the deployment's public address) makes the
    links of Telegram's signal blocks absolute."""
    portfolio_ids = {e.portfolio_id for e in events if e.portfolio_id is not None}
    owners: dict[int, tuple[int, str]] = {}
    if portfolio_ids:
        rows = await uow.session.execute(
            select(Portfolio.id, Portfolio.user_id, Portfolio.name).where(
                Portfolio.id.in_(portfolio_ids)
            )
        )
        owners = {row.id: (row.user_id, row.name) for row in rows}
    pending: list[service.Pending] = []
    for event in events:
        kind = BY_EVENT.get(event.type)
        owner_id = event.portfolio_id
        owner = owners.get(owner_id) if owner_id is not None else None
        named = kind.recipients.get(event.type) if kind is not None else None
        if kind is None or (named is None and owner is None):  # not ours, or portfolio deleted
            continue
        message = kind.renderers[event.type](event)
        if message is None:
            continue
        if owner is not None and owner_id is not None:
            named_portfolio = {"portfolio_name": owner[1], "portfolio_code": code_of(owner_id)}
            message = replace(message, data={**message.data, **named_portfolio})
        if message.link is not None and message.telegram is not None:
            message = replace(
                message, telegram=text.linked(message.telegram, base_url + message.link)
            )
        readers = named(event) if named is not None else [owner[0]] if owner else []
        for user_id in readers:
            # The inbox links to what it is about (NotificationRead.link): the page the message
            # names, else the portfolio's own page for its owner.
            link = message.link
            if link is None and owner is not None and owner[0] == user_id:
                link = f"/app/portfolios/{owner_id}"
            told = replace(message, data={**message.data, "link": link}) if link else message
            pending.append(service.Pending(user_id, kind.name, told, event.portfolio_id, event.id))
    await service.deliver(uow, pending)


INBOX = "notifications.inbox"
TYPES = frozenset(BY_EVENT)


def inbox_consumer(ctx: AppContext) -> Consumer:
    """The consumer, bound to the deployment's public address (the links point there)."""
    base_url = ctx.settings.public_base_url.rstrip("/")

    async def handle(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
        await notify(uow, events, base_url)

    # It writes only its own tables, so the SQLite order writer keeps what it remembers.
    return Consumer(INBOX, handle, types=TYPES, own_tables_only=True)
