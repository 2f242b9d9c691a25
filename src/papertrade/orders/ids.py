"""Order ids handed out before the INSERT, so a batch of orders needs no round trip per order.

An order's id goes into its fill and ledger rows and its events while the unit of work is still
open; asking the database for it one INSERT at a time is what made each order cost a dozen round
trips. PostgreSQL hands out a block of its sequence in one query (sequences are safe across
processes); SQLite has one writer, so the unit of work holding the write lock reads the highest id
once and counts on from there, and the writer thread remembers it while nobody else writes
(db.Database._remembered).
"""

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from papertrade.db import WRITER_MEMORY
from papertrade.models import Order

_POOL = "order_ids"
_LAST = "order_ids_last"


def reserve(session: Session, count: int) -> None:
    """Have `count` more ids ready in this unit of work (one query)."""
    pool: list[int] = session.info.setdefault(_POOL, [])
    if session.get_bind().dialect.name == "postgresql":
        rows = session.scalars(
            text(
                "SELECT nextval(pg_get_serial_sequence('orders', 'id')) FROM generate_series(1, :n)"
            ),
            {"n": count},
        )
        pool.extend(rows)
    else:
        memory = session.info.get(WRITER_MEMORY, session.info)
        last = memory.get(_LAST)
        if last is None:
            last = (session.scalar(select(func.coalesce(func.max(Order.id), 0)))) or 0
        pool.extend(range(last + 1, last + 1 + count))
        memory[_LAST] = last + count


def next_id(session: Session) -> int:
    """The id for the next order of this unit of work."""
    pool: list[int] = session.info.setdefault(_POOL, [])
    if not pool:
        reserve(session, 1)
    return pool.pop(0)
