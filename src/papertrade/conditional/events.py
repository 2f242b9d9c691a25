"""What conditional orders emit; each carries the conditional order as /v1 shows it."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import PortfolioEvent

OCO_REASON = "one-cancels-other"


@dataclass(frozen=True, slots=True, kw_only=True)
class ConditionalEvent(PortfolioEvent):
    conditional: Mapping[str, Any]

    @property
    def data(self) -> Mapping[str, Any]:
        return self.conditional

    @property
    def conditional_id(self) -> int:
        return int(self.conditional["id"])

    @property
    def symbol(self) -> str:
        return str(self.conditional["symbol"])


@dataclass(frozen=True, slots=True, kw_only=True)
class ConditionalPlaced(ConditionalEvent):
    """Waiting for its trigger: the engine watches it from now on."""

    type = "conditional.new"

    def is_durable(self) -> bool:
        # A new take-profit / stop-loss (reduce-only) changes a position's protection:
        # subscribers who asked for `modify` signals hear of it (subscriptions/consumers.py).
        return bool(self.conditional.get("reduce_only"))


@dataclass(frozen=True, slots=True, kw_only=True)
class ConditionalCanceled(ConditionalEvent):
    type = "conditional.canceled"

    def is_durable(self) -> bool:
        # A protection removed or replaced by its owner is a `modify` signal; one cancelled
        # because its position closed (one-cancels-other) is not news to anyone.
        reason = str(self.conditional.get("reason") or "")
        return bool(self.conditional.get("reduce_only")) and OCO_REASON not in reason


@dataclass(frozen=True, slots=True, kw_only=True)
class ConditionalTriggered(ConditionalEvent):
    """Its trigger was reached and its order placed (`actual_order_id`)."""

    type = "conditional.triggered"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class ConditionalRejected(ConditionalEvent):
    """Its trigger was reached but its order was refused, or there was nothing left to close."""

    type = "conditional.rejected"
    durable = True
