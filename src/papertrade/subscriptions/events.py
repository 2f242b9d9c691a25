"""What subscriptions emit: durable, so the inbox and other channels (issue #18) deliver them."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionSignal(DomainEvent):
    """A trade of a followed portfolio, for one subscriber, on the channels they chose."""

    type = "subscription.signal"
    durable = True
    subscription_id: int
    user_id: int
    channels: tuple[str, ...]
    signal: Mapping[str, Any]

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "subscription_id": self.subscription_id,
            "user_id": self.user_id,
            "channels": list(self.channels),
            **self.signal,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscriptionChanged(DomainEvent):
    """Paid, renewed, past due, cancelled, ended: the subscriber is told."""

    type = "subscription.changed"
    durable = True
    subscription_id: int
    user_id: int
    portfolio_id: int | None
    strategy_id: int | None = None
    status: str
    what: str  # subscribed | renewed | past_due | cancelling | ended | resubscribed

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "subscription_id": self.subscription_id,
            "user_id": self.user_id,
            "portfolio_id": self.portfolio_id,
            "strategy_id": self.strategy_id,
            "status": self.status,
            "what": self.what,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class NewSubscriber(DomainEvent):
    """Someone subscribed to a portfolio or followed a strategy: its owner is told."""

    type = "subscription.new_subscriber"
    durable = True
    subscription_id: int
    owner_user_id: int
    portfolio_id: int | None
    strategy_id: int | None = None
    name: str  # the portfolio's or strategy's
    subscriber_name: str
    tier: str

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "subscription_id": self.subscription_id,
            "owner_user_id": self.owner_user_id,
            "portfolio_id": self.portfolio_id,
            "strategy_id": self.strategy_id,
            "name": self.name,
            "subscriber_name": self.subscriber_name,
            "tier": self.tier,
        }
