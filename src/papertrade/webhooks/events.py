"""What signals emit: each carries the whole signal as GET …/signals lists it."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import PortfolioEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class SignalEvent(PortfolioEvent):
    signal: Mapping[str, Any]

    @property
    def data(self) -> Mapping[str, Any]:
        return self.signal


@dataclass(frozen=True, slots=True, kw_only=True)
class SignalReceived(SignalEvent):
    type = "signal.received"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class SignalExecuted(SignalEvent):
    type = "signal.executed"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class SignalIgnored(SignalEvent):
    """The alert was valid but changed nothing (e.g. close while flat)."""

    type = "signal.ignored"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class SignalRejected(SignalEvent):
    type = "signal.rejected"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class SignalDuplicate(SignalEvent):
    type = "signal.duplicate"
    durable = True
