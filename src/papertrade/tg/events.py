"""What the Telegram package emits."""

from dataclasses import dataclass

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class TelegramQueued(DomainEvent):
    """Outbound messages were queued: the sender need not wait for its next look."""

    type = "telegram.queued"
