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


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderPartiallyFilled(OrderEvent):
    type = "order.partially_filled"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderFilled(OrderEvent):
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
