"""What the mail package emits."""

from dataclasses import dataclass

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class MailQueued(DomainEvent):
    """Outbound mail was queued: the sender need not wait for its next look."""

    type = "mail.queued"
