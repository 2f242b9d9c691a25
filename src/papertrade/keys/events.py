"""What API keys emit: durable, so the inbox tells the owner of every key made or revoked (a key
they did not make is the first sign someone else is in their account)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class _KeyEvent(DomainEvent):
    durable = True
    user_id: int
    key_id: int
    prefix: str  # the key's first characters, as the key list shows them; never the key
    note: str
    scope: str

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "user_id": self.user_id,
            "key_id": self.key_id,
            "prefix": self.prefix,
            "note": self.note,
            "scope": self.scope,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKeyCreated(_KeyEvent):
    type = "api_key.created"


@dataclass(frozen=True, slots=True, kw_only=True)
class ApiKeyRevoked(_KeyEvent):
    type = "api_key.revoked"
