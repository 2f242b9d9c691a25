"""What the wallet emits: durable, so an inbox or e-mail consumer (issue #18) never misses one."""

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class WalletCredited(DomainEvent):
    """Money arrived in a user's wallet from outside (a recharge, an operator's resolution)."""

    type = "wallet.credited"
    durable = True
    user_id: int
    kind: str
    amount: Decimal
    balance: Decimal
    reference: str | None = None

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "user_id": self.user_id,
            "kind": self.kind,
            "amount": self.amount,
            "balance": self.balance,
            "reference": self.reference,
        }
