"""Domain events: collected inside a unit of work and published only after it commits."""

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from papertrade.db import AnySession
from papertrade.kit.time import now_ms

log = logging.getLogger("papertrade.events")


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened to a portfolio: `order.filled`, `position.changed`, …"""

    type: str
    portfolio_id: int
    data: dict[str, Any]
    time: int = field(default_factory=now_ms)


Subscriber = Callable[[list[Event]], Awaitable[None]]
AfterCommit = Callable[[], None]


class EventBus:
    """In-process fan-out to subscribers (the WebSocket hub, copy trading, the inbox…)."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    async def publish(self, events: list[Event]) -> None:
        for subscriber in self._subscribers:
            try:
                await subscriber(events)
            except Exception:  # one broken subscriber must not stop the others
                log.exception("event subscriber failed")


def emit(session: AnySession, event: Event) -> None:
    """Queue an event on the unit of work; it is published after the commit, never before."""
    session.info.setdefault("events", []).append(event)


def after_commit(session: AnySession, action: AfterCommit) -> None:
    """Run `action` once the unit of work has committed (e.g. put an order in the book)."""
    session.info.setdefault("after_commit", []).append(action)
