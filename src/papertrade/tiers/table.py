"""The tiers and their limits (B9's table). A limit of None means unlimited."""

from dataclasses import dataclass
from decimal import Decimal

PERIOD_MS = 30 * 86_400_000  # one paid period: 30 days


@dataclass(frozen=True, slots=True)
class Tier:
    name: str
    price: Decimal  # USDT per 30-day period, paid from the wallet
    portfolios: int
    strategies: int
    python_strategies: bool
    backtest_history_days: int
    webhook_tokens: int
    webhook_signals_per_min: int
    api_requests_per_min: int
    leaders_followed: int
    followers: int
    paid_signal_subscriptions: bool
    ai_messages_per_day: int


FREE = Tier("free", Decimal(0), 2, 3, False, 90, 1, 10, 60, 1, 10, False, 10)
PRO = Tier("pro", Decimal(15), 10, 25, True, 730, 10, 60, 600, 10, 300, True, 100)
ELITE = Tier("elite", Decimal(49), 50, 100, True, 1825, 50, 300, 3000, 20, 1000, True, 500)
TIERS = {tier.name: tier for tier in (FREE, PRO, ELITE)}
ORDER = ("free", "pro", "elite")

# The limits checked where their objects are created, with the words a user reads.
LIMITS = {
    "portfolios": "portfolios",
    "webhook_tokens": "webhook tokens",
}


def next_up(tier: Tier) -> Tier | None:
    index = ORDER.index(tier.name)
    return TIERS[ORDER[index + 1]] if index + 1 < len(ORDER) else None
