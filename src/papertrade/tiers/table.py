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
    # Per credential, beyond B9's table (docs/tiers.md "Rates by tier"): a web session's requests
    # per minute, and a /fapi key's request weight per minute and new orders per 10 s and per
    # minute. Pro and elite get Binance's own /fapi limits: a bot tuned here must run on Binance.
    session_requests_per_min: int
    fapi_weight_per_min: int
    fapi_orders_per_10s: int
    fapi_orders_per_min: int
    # Backtests one user may have queued or running at once (beyond B9: fair use of the
    # workers; docs/strategies.md "Fair use").
    backtests_at_once: int


# B9 proposes 60 REST requests a minute for free; that is one a second, so a bot polling its
# position every second had no room left for its orders. B9's numbers are proposals: free gets
# 300 (5 a second), pro 1200 (the service-wide default before tiers), elite B9's 3000.
FREE = Tier(
    "free", Decimal(0), 2, 3, False, 90, 1, 10, 300, 1, 10, False, 10, 600, 1200, 100, 400, 2
)
PRO = Tier(
    "pro",
    Decimal(15),
    10,
    25,
    True,
    730,
    10,
    60,
    1200,
    10,
    300,
    True,
    100,
    1200,
    2400,
    300,
    1200,
    4,
)
ELITE = Tier(
    "elite",
    Decimal(49),
    50,
    100,
    True,
    1825,
    50,
    300,
    3000,
    20,
    1000,
    True,
    500,
    2400,
    2400,
    300,
    1200,
    8,
)
TIERS = {tier.name: tier for tier in (FREE, PRO, ELITE)}
ORDER = ("free", "pro", "elite")

# The limits checked where their objects are created, with the words a user reads.
LIMITS = {
    "portfolios": "portfolios",
    "webhook_tokens": "webhook tokens",
    "strategies": "strategies",
    "backtest_history_days": "days of backtest history",
}


def next_up(tier: Tier) -> Tier | None:
    index = ORDER.index(tier.name)
    return TIERS[ORDER[index + 1]] if index + 1 < len(ORDER) else None
