"""What accounts emit: durable, so the inbox tells the user of a sign-in from a new device."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class SignedInFromNewDevice(DomainEvent):
    type = "user.new_device"
    durable = True
    user_id: int
    device: str  # the browser and system, as users/devices.describe names them

    @property
    def data(self) -> Mapping[str, Any]:
        return {"user_id": self.user_id, "device": self.device}
