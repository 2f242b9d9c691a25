"""What the inbox emits: new notifications, so open sockets show them at once."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class NotificationsCreated(DomainEvent):
    """Notifications that went into inboxes in one unit of work (one event for the whole batch:
    a signal to 10,000 subscribers is one event, not 10,000). Not durable: the rows are."""

    type = "notification.created"
    notifications: Sequence[Mapping[str, Any]]  # as GET /v1/inbox lists them, with user_id
