"""Domain events: typed, collected by the unit of work, published only after it commits.

Publishing after the commit is the one way work happens after a change: the engine puts a new
resting order in its book, the WebSocket relays the change, the credential cache forgets revoked
keys. Each domain package declares what it emits in its own `events.py`; see
docs/architecture.md.
"""

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from papertrade.kit.time import now_ms

log = logging.getLogger("papertrade.events")


@dataclass(frozen=True, slots=True, kw_only=True)
class DomainEvent:
    """Something that happened; each subclass names it (`type`, as the WebSocket spells it)."""

    type: ClassVar[str]
    # Written to the durable outbox in the same transaction (events other areas must not miss).
    durable: ClassVar[bool] = False
    time: int = field(default_factory=now_ms)

    @property
    def data(self) -> Mapping[str, Any]:
        """The event's body (as the WebSocket and the outbox keep it)."""
        return {}

    @property
    def subject(self) -> int | None:
        """The portfolio the event concerns, if any (outbox order is kept per portfolio)."""
        return None

    def is_durable(self) -> bool:
        """Whether this event goes to the outbox (its class's `durable`, unless it says more)."""
        return self.durable


@dataclass(frozen=True, slots=True, kw_only=True)
class PortfolioEvent(DomainEvent):
    """Something that happened to one portfolio; its owner's WebSocket channels carry it."""

    portfolio_id: int

    @property
    def subject(self) -> int | None:
        return self.portfolio_id


Subscriber = Callable[[Sequence[DomainEvent]], Awaitable[None]]


class EventBus:
    """In-process fan-out of committed events to subscribers (engine, WebSocket, caches…)."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    async def publish(self, events: Sequence[DomainEvent]) -> None:
        if not events:
            return
        for subscriber in self._subscribers:
            try:
                await subscriber(events)
            except Exception:  # one broken subscriber must not stop the others
                log.exception("event subscriber failed")
