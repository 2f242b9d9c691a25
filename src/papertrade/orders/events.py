"""What orders emit: each carries the order as the WebSocket shows it (orders/views.py)."""

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from papertrade.events import PortfolioEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderEvent(PortfolioEvent):
    order: Mapping[str, Any]

    @property
    def data(self) -> Mapping[str, Any]:
        return self.order

    @property
    def order_id(self) -> int:
        return int(self.order["id"])


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderAccepted(OrderEvent):
    """A new order was recorded; `resting`: it now waits in the book for its price."""

    type = "order.new"
    durable = True
    resting: bool = False

    def is_durable(self) -> bool:
        # An order filled or expired at once is announced durably by that outcome; one that
        # rests must be known before anything else happens to it.
        return self.resting

    @property
    def remaining(self) -> Decimal:
        return Decimal(self.order["quantity"]) - Decimal(self.order["filled_quantity"])


FILL_FIELDS = ("id", "price", "quantity", "commission", "realized_pnl", "liquidity")


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderFillEvent(OrderEvent):
    """An order traded: `fill` is the row of that execution (orders/fills.py), whose `id` the
    insert before the commit sets (orders/pending.py); the data shows it as `fill`."""

    fill: Mapping[str, Any] | None = None

    @property
    def data(self) -> Mapping[str, Any]:
        if self.fill is None:
            return self.order
        return {**self.order, "fill": {k: self.fill.get(k) for k in FILL_FIELDS}}


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderPartiallyFilled(OrderFillEvent):
    type = "order.partially_filled"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderFilled(OrderFillEvent):
    type = "order.filled"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderCanceled(OrderEvent):
    type = "order.canceled"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderExpired(OrderEvent):
    type = "order.expired"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderRejected(OrderEvent):
    """An order a signal asked for was refused; `order` describes the request and the reason."""

    type = "order.rejected"
    durable = True
