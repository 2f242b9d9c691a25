"""What live accounts emit."""

from dataclasses import dataclass

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class LiveOrderQueued(DomainEvent):
    """A mirrored order waits to be sent: after the commit, its send job is enqueued."""

    type = "live.order_queued"
    live_order_id: int
