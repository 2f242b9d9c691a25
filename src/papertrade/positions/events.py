"""What positions emit: each carries the position as the WebSocket shows it."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import PortfolioEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class PositionEvent(PortfolioEvent):
    position: Mapping[str, Any]

    @property
    def data(self) -> Mapping[str, Any]:
        return self.position


@dataclass(frozen=True, slots=True, kw_only=True)
class PositionChanged(PositionEvent):
    type = "position.changed"


@dataclass(frozen=True, slots=True, kw_only=True)
class PositionClosed(PositionEvent):
    type = "position.closed"


@dataclass(frozen=True, slots=True, kw_only=True)
class PositionLiquidated(PositionEvent):
    """Closed by the engine because the portfolio fell to its maintenance margin."""

    type = "position.liquidated"
    durable = True
