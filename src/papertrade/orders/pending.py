"""Rows a unit of work writes in bulk just before it commits: new orders, fills, ledger entries.

One executemany per table instead of one INSERT per row (through the ORM's unit of work for
orders) is what lets one tick fill thousands of resting orders and one group commit place
hundreds of new ones. New orders are written as they stand at the end of the unit of work: an
order placed and filled in the same unit of work is inserted once, filled.
"""

from typing import Any, cast

from sqlalchemy import Table, bindparam, event, insert, update
from sqlalchemy.orm import Session

from papertrade.db import AnySession
from papertrade.models import Fill, LedgerEntry, Order
from papertrade.orders.record import FILL_STATE, OrderRecord

_KEY = "pending_rows"
# Core inserts into the tables rather than the ORM's bulk insert of the classes: the same
# executemany without the ORM's per-row bookkeeping (a quarter of the writer thread's time).
_ORDERS, _FILLS, _LEDGER = (cast(Table, model.__table__) for model in (Order, Fill, LedgerEntry))
_UPDATE_FILLED = (
    update(_ORDERS)
    .where(_ORDERS.c.id == bindparam("order_id"))
    .values({name: bindparam(name) for name in FILL_STATE})
)


class Pending:
    __slots__ = ("filled", "fills", "ledger", "orders")

    def __init__(self) -> None:
        self.orders: list[OrderRecord] = []
        self.filled: list[OrderRecord] = []  # stored orders loaded as plain records and filled
        self.fills: list[dict[str, Any]] = []
        self.ledger: list[dict[str, Any]] = []


def of(session: AnySession) -> Pending:
    """The rows queued on this unit of work."""
    pending: Pending = session.info.setdefault(_KEY, Pending())
    return pending


@event.listens_for(Session, "before_commit")
def write(session: Session) -> None:
    """Write the queued rows (a Session event: async sessions and the SQLite writer thread's
    sessions alike); the async order path also calls it at once, so later queries see them."""
    pending: Pending | None = session.info.pop(_KEY, None)
    if pending is None:
        return
    # On the connection, not the session: these are Core statements, and the session's ORM
    # handling of each would cost more than the executemany itself.
    connection = session.connection()
    if pending.orders:
        connection.execute(insert(_ORDERS), [order.row() for order in pending.orders])
    if pending.filled:
        connection.execute(_UPDATE_FILLED, [order.fill_state() for order in pending.filled])
    session.flush()  # positions and balances the rows go with
    if pending.fills:
        connection.execute(insert(_FILLS), pending.fills)
    if pending.ledger:
        connection.execute(insert(_LEDGER), pending.ledger)
