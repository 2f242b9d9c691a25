"""What credential services emit."""

from dataclasses import dataclass

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class CredentialsRevoked(DomainEvent):
    """An API key, key pair, webhook token or session stopped working: caches must forget it."""

    type = "credentials.revoked"
