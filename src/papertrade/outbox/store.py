"""Writing durable events into the outbox, and reading them back in order.

Rows are written at the end of the unit of work that emitted the events, in its transaction: an
event exists exactly when its change committed. Consumers read in id order, so ids must follow
commit order. SQLite has one writer, so they do; on PostgreSQL two transactions could take ids
in one order and commit in the other, and a reader between the commits would pass over the
lower id for good. A transaction-scoped advisory lock, taken just before the rows go in and held
to the commit, makes the outbox's commits one at a time (the work before them stays parallel).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import orjson
from sqlalchemy import Table, insert, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from papertrade.events import DomainEvent
from papertrade.models import OutboxEvent

_TABLE = cast(Table, OutboxEvent.__table__)
_LOCK = text("SELECT pg_advisory_xact_lock(7306925)")  # any fixed number: the outbox's


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event as a consumer reads it back: its body's decimals are decimal strings."""

    id: int
    type: str
    portfolio_id: int | None
    time: int
    data: dict[str, Any]


def _json_default(value: Any) -> str:
    return str(value)  # Decimal, exact


def write(session: Session, events: Sequence[DomainEvent]) -> None:
    """Add the durable ones of `events` to the outbox, in this transaction."""
    rows = [
        {
            "type": event.type,
            "portfolio_id": event.subject,
            "time": event.time,
            "data": orjson.dumps(dict(event.data), default=_json_default).decode(),
        }
        for event in events
        if event.is_durable()
    ]
    if not rows:
        return
    connection = session.connection()
    if connection.dialect.name == "postgresql":
        connection.execute(_LOCK)
    connection.execute(insert(_TABLE), rows)


async def after(session: AsyncSession, last_id: int, limit: int) -> list[StoredEvent]:
    """Up to `limit` events after `last_id`, oldest first."""
    rows = await session.execute(
        select(_TABLE).where(_TABLE.c.id > last_id).order_by(_TABLE.c.id).limit(limit)
    )
    return [
        StoredEvent(row.id, row.type, row.portfolio_id, row.time, orjson.loads(row.data))
        for row in rows
    ]
