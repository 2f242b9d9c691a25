"""Order ids handed out before the INSERT, so a batch of orders needs no round trip per order.

An order's id goes into its fill and ledger rows and its events while the unit of work is still
open; asking the database for it one INSERT at a time is what made each order cost a dozen round
trips. PostgreSQL hands out a block of its sequence in one query (sequences are safe across
processes); SQLite has one writer, so the unit of work holding the write lock reads the highest id
once and counts on from there, and the writer thread remembers it while nobody else writes
(db.Database._remembered).
"""

from sqlalchemy import func, select, text

from papertrade.models import ConditionalOrder, Order
from papertrade.uow import SyncWork


class OrderIds:
    """A unit of work's pool of ids ready for new orders."""

    __slots__ = ("pool",)

    def __init__(self) -> None:
        self.pool: list[int] = []


class LastOrderId:
    """What SQLite's writer thread remembers: the highest id it handed out."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value: int | None = None


def reserve(uow: SyncWork, count: int) -> None:
    """Have `count` more ids ready in this unit of work (one query)."""
    pool = uow.part(OrderIds).pool
    session = uow.session
    if session.get_bind().dialect.name == "postgresql":
        rows = session.scalars(
            text(
                "SELECT nextval(pg_get_serial_sequence('orders', 'id')) FROM generate_series(1, :n)"
            ),
            {"n": count},
        )
        pool.extend(rows)
        return
    last = uow.memory.part(LastOrderId) if uow.memory is not None else uow.part(LastOrderId)
    if last.value is None:
        # Conditional orders draw their ids from this sequence too (models/conditional_order.py).
        last.value = max(
            session.scalar(select(func.coalesce(func.max(Order.id), 0))) or 0,
            session.scalar(select(func.coalesce(func.max(ConditionalOrder.id), 0))) or 0,
        )
    pool.extend(range(last.value + 1, last.value + 1 + count))
    last.value += count


def next_id(uow: SyncWork) -> int:
    """The id for the next order of this unit of work."""
    pool = uow.part(OrderIds).pool
    if not pool:
        reserve(uow, 1)
        pool = uow.part(OrderIds).pool
    return pool.pop(0)
