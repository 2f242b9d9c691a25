"""What the ledger emits."""

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from papertrade.events import PortfolioEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class BalanceChanged(PortfolioEvent):
    """The wallet balance after a change (one per change the owner sees, not per ledger row)."""

    type = "balance.changed"
    balance: Decimal

    @property
    def data(self) -> Mapping[str, Any]:
        return {"balance": self.balance}


@dataclass(frozen=True, slots=True, kw_only=True)
class FundingCharged(PortfolioEvent):
    """Funding paid (negative) or received on one position at one funding time."""

    type = "funding.charged"
    durable = True
    symbol: str
    amount: Decimal
    funding_time: int
    rate: Decimal

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "symbol": self.symbol,
            "amount": self.amount,
            "funding_time": self.funding_time,
            "rate": self.rate,
        }
