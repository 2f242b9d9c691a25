"""The single principal type every surface resolves credentials to."""

from dataclasses import dataclass
from typing import Literal

CredentialKind = Literal["session", "api_key", "compat", "webhook"]


@dataclass(frozen=True, slots=True)
class Principal:
    """An authenticated caller: a user acting through one credential."""

    kind: CredentialKind
    user_id: int
    credential_id: int
    scope: Literal["read", "write"] = "write"
    portfolio_id: int | None = None  # compat keys and webhook tokens are bound to one portfolio
    # Requests per minute the user's membership tier allows this credential (None: no tier cap).
    tier_rate_per_min: int | None = None

    @property
    def can_write(self) -> bool:
        return self.scope == "write"

    @property
    def rate_key(self) -> str:
        return f"{self.kind}:{self.credential_id}"
