"""An order placed in the current unit of work, before its row exists.

A plain slotted object rather than an ORM instance: placing an order sets and reads its fields
some fifty times (validation, the fill, events, the response), and the ORM's attribute
instrumentation made that the largest single cost of a MARKET order. Its row is written with the
other new orders of the unit of work in one executemany (orders/pending.py). The fields are the
`orders` columns; tests/trading/test_new_order.py keeps the two in step.
"""

from dataclasses import dataclass, fields
from decimal import Decimal
from typing import Any

from papertrade.models import Order


@dataclass(slots=True)
class NewOrder:
    id: int
    portfolio_id: int
    symbol: str
    side: str
    type: str
    action: str
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


COLUMNS = tuple(f.name for f in fields(NewOrder))

# Anything that reads or updates an order takes either: a stored one or one being placed.
AnyOrder = Order | NewOrder
