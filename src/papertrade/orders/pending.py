"""Rows a unit of work writes in bulk just before it commits: new orders, filled orders, fills.

One executemany per table instead of one INSERT per row (through the ORM's unit of work for
orders) is what lets one tick fill thousands of resting orders and one group commit place
hundreds of new ones. New orders are written as they stand at the end of the unit of work: an
order placed and filled in the same unit of work is inserted once, filled. Ledger rows are
written the same way by the ledger (ledger/service.py).
"""

from typing import Any, cast

from sqlalchemy import Table, bindparam, insert, update
from sqlalchemy.orm import Session

from papertrade.models import Fill, Order
from papertrade.orders.record import FILL_STATE, OrderRecord

# Core inserts into the tables rather than the ORM's bulk insert of the classes: the same
# executemany without the ORM's per-row bookkeeping (a quarter of the writer thread's time).
_ORDERS, _FILLS = (cast(Table, model.__table__) for model in (Order, Fill))
_INSERT_FILLS = insert(_FILLS).returning(_FILLS.c.id, sort_by_parameter_order=True)
_UPDATE_FILLED = (
    update(_ORDERS)
    .where(_ORDERS.c.id == bindparam("order_id"))
    .values({name: bindparam(name) for name in FILL_STATE})
)


class OrderRows:
    """A unit of work's part (uow.part(OrderRows)): the order rows it writes before commit."""

    trading_rows = True  # its writes make the SQLite order writer forget (UnitOfWork)

    __slots__ = ("filled", "fills", "orders")

    def __init__(self) -> None:
        self.orders: list[OrderRecord] = []
        self.filled: list[OrderRecord] = []  # stored orders loaded as plain records and filled
        self.fills: list[dict[str, Any]] = []

    def before_commit(self, session: Session) -> None:
        """Write the queued rows; the async order path also calls it at once, so later queries
        of its unit of work see them."""
        # On the connection, not the session: these are Core statements, and the session's ORM
        # handling of each would cost more than the executemany itself.
        connection = session.connection()
        if self.orders:
            connection.execute(insert(_ORDERS), [order.row() for order in self.orders])
        if self.filled:
            connection.execute(_UPDATE_FILLED, [order.fill_state() for order in self.filled])
        session.flush()  # positions and balances the rows go with
        if self.fills:
            # Each row learns its id (its fill event shows it, as GET /fapi/v1/userTrades does).
            inserted = connection.execute(_INSERT_FILLS, self.fills)
            for row, fill_id in zip(self.fills, inserted.scalars(), strict=True):
                row["id"] = fill_id
        self.orders, self.filled, self.fills = [], [], []
