"""What live strategies emit: on the owner's `signals` WebSocket channel of the portfolio the
strategy trades, and durable (the outbox keeps them for other areas)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import DomainEvent, PortfolioEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class StrategyEvent(PortfolioEvent):
    payload: Mapping[str, Any]

    @property
    def data(self) -> Mapping[str, Any]:
        return self.payload


@dataclass(frozen=True, slots=True, kw_only=True)
class StrategySignalled(StrategyEvent):
    """A deployed strategy's rule fired on a closed bar (executed, refused or skipped)."""

    type = "signal.strategy"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class StrategyPaused(StrategyEvent):
    """A deployment failed and was paused; `payload["reason"]` says why."""

    type = "signal.strategy_paused"
    durable = True


@dataclass(frozen=True, slots=True, kw_only=True)
class BacktestProgressed(DomainEvent):
    """A backtest moved on (running with its progress, done or failed): to the owner's
    `backtests` WebSocket channel (ws/inbox.py relays it to every process). Not durable: the
    backtest row and its job are the truth, the socket only saves polling."""

    type = "backtest.progress"
    user_id: int
    payload: Mapping[str, Any]

    @property
    def data(self) -> Mapping[str, Any]:
        return {"user_id": self.user_id, **self.payload}
