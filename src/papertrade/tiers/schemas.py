"""Bodies of /v1/launch/tiers and /v1/launch/ai-quota."""

from typing import Literal

from papertrade.kit.schemas import Money, Schema, StrictInput


class TierRead(Schema):
    name: str
    price: Money  # USDT per 30 days, paid from the wallet
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
    session_requests_per_min: int
    fapi_weight_per_min: int
    fapi_orders_per_10s: int
    fapi_orders_per_min: int
    backtests_at_once: int


class MyTierRead(Schema):
    tier: str
    paid_until: int | None
    wallet_balance: Money


class TierChange(StrictInput):
    tier: Literal["free", "pro", "elite"]


class AiQuotaRead(Schema):
    limit: int
    used: int
    remaining: int
    resets_at: int
