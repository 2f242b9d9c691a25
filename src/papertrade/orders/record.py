"""An order as a plain record, for the two hot paths: placing orders and filling resting ones.

A plain slotted object rather than an ORM instance: placing or filling an order sets and reads
its fields some fifty times (validation, the fill, events, the response), and the ORM's attribute
instrumentation made that the largest single cost of a MARKET order and of a crossing. The rows
go back with the unit of work's other orders in one executemany (orders/pending.py): an INSERT
for new orders, an UPDATE of the fill state for stored ones. The fields are the `orders` columns;
tests/trading_api/test_group_commit.py keeps the two in step.
"""

from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any

from papertrade.models import Order


@dataclass(slots=True)
class OrderRecord:
    id: int
    portfolio_id: int
    symbol: str
    side: str
    type: str
    action: str
    position_side: str
    time_in_force: str
    status: str
    is_open: bool
    quantity: Decimal
    size_usd: Decimal
    price: Decimal | None
    avg_price: Decimal
    filled_quantity: Decimal
    filled_quote: Decimal
    commission: Decimal
    realized_pnl: Decimal
    reserved_margin: Decimal
    client_order_id: str
    source: str
    reject_reason: str | None
    created_at: int
    updated_at: int
    filled_at: int | None

    def row(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in COLUMNS}

    def fill_state(self) -> dict[str, Any]:
        """What a fill changes, for the UPDATE of a stored order."""
        return {"order_id": self.id, **{name: getattr(self, name) for name in FILL_STATE}}


COLUMNS = tuple(f.name for f in fields(OrderRecord))
FILL_STATE = (
    "status",
    "is_open",
    "avg_price",
    "filled_quantity",
    "filled_quote",
    "commission",
    "realized_pnl",
    "reserved_margin",
    "updated_at",
    "filled_at",
    "reject_reason",  # why a reduce-only remainder expired (order history)
)

# Anything that reads or updates an order takes either: a stored one or one being placed.
AnyOrder = Order | OrderRecord
