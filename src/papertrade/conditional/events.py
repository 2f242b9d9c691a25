"""What conditional orders emit; each carries the conditional order as /v1 shows it."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import PortfolioEvent


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


@dataclass(frozen=True, slots=True, kw_only=True)
class ConditionalCanceled(ConditionalEvent):
    type = "conditional.canceled"


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
