"""What launch emits: durable, for the e-mail consumer of the notifications area (issue #18)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitlistJoined(DomainEvent):
    """Someone joined (or asked again to join) the waitlist: send the double opt-in e-mail,
    whose link carries `verify_token` to POST /v1/launch/waitlist/verify."""

    type = "waitlist.joined"
    durable = True
    email: str
    verify_token: str

    @property
    def data(self) -> Mapping[str, Any]:
        return {"email": self.email, "verify_token": self.verify_token}


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitlistInvited(DomainEvent):
    """A waitlister's turn came: send them their invitation code (signup link ?code=…)."""

    type = "waitlist.invited"
    durable = True
    email: str
    code: str

    @property
    def data(self) -> Mapping[str, Any]:
        return {"email": self.email, "code": self.code}
