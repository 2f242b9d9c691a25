"""A conditional order as a plain record: what a tick's triggering reads, changes and writes
back in one multi-row UPDATE, without the ORM's per-row bookkeeping (thousands per tick)."""

from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any, cast

from sqlalchemy import Table, bindparam, select, update
from sqlalchemy.orm import Session

from papertrade.models import ConditionalOrder

TABLE = cast(Table, ConditionalOrder.__table__)
# What triggering changes (conditional/service.py: _trigger and _close).
CHANGED = (
    "status",
    "is_open",
    "reason",
    "updated_at",
    "triggered_at",
    "trigger_price",
    "actual_order_id",
)
_UPDATE = (
    update(TABLE)
    .where(TABLE.c.id == bindparam("conditional_id"))
    .values({name: bindparam(name) for name in CHANGED})
)


@dataclass(slots=True, eq=False)
class ConditionalRecord:
    id: int
    portfolio_id: int
    symbol: str
    side: str
    type: str
    working_type: str
    trigger_price: Decimal | None
    price: Decimal | None
    quantity: Decimal | None
    close_position: bool
    reduce_only: bool
    price_protect: bool
    callback_rate: Decimal | None
    activation_price: Decimal | None
    time_in_force: str
    status: str
    is_open: bool
    client_algo_id: str
    source: str
    actual_order_id: int | None
    reason: str | None
    created_at: int
    updated_at: int
    triggered_at: int | None
    position_side: str
    trailing_extreme: Decimal | None


COLUMNS = tuple(f.name for f in fields(ConditionalRecord))


def portfolios_of(session: Session, conditional_ids: list[int], chunk: int) -> list[int]:
    """The portfolios of `conditional_ids`, in id order, read without a lock (a conditional
    order's portfolio never changes)."""
    found: set[int] = set()
    for start in range(0, len(conditional_ids), chunk):
        found.update(
            session.connection().scalars(
                select(TABLE.c.portfolio_id)
                .where(TABLE.c.id.in_(conditional_ids[start : start + chunk]))
                .distinct()
            )
        )
    return sorted(found)


def load_open(session: Session, conditional_ids: list[int], chunk: int) -> list[ConditionalRecord]:
    """The waiting ones of `conditional_ids`, locked (PostgreSQL), in id order."""
    records: list[ConditionalRecord] = []
    for start in range(0, len(conditional_ids), chunk):
        rows = session.connection().execute(
            select(*(TABLE.c[name] for name in COLUMNS))
            .where(
                TABLE.c.id.in_(conditional_ids[start : start + chunk]),
                TABLE.c.is_open.is_(True),
            )
            .order_by(TABLE.c.id)
            .with_for_update()
        )
        records.extend(ConditionalRecord(*row) for row in rows)
    return records


def write_back(session: Session, records: list[ConditionalRecord]) -> None:
    """Their new state, in one executemany."""
    if records:
        params: list[dict[str, Any]] = [
            {"conditional_id": r.id, **{name: getattr(r, name) for name in CHANGED}}
            for r in records
        ]
        session.connection().execute(_UPDATE, params)
