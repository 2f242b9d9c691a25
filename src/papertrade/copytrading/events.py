"""What copy trading emits: durable, so the inbox (issue #18) can notify both sides."""

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from papertrade.events import DomainEvent, PortfolioEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyFilled(PortfolioEvent):
    """A leader fill was copied into the follower's portfolio (`portfolio_id`). Not durable:
    the order's own events are; this one tells the follower's `social` socket which leader
    fill the order mirrors."""

    type = "copy.filled"
    relation_id: int
    follower_user_id: int
    leader_order_id: int
    follower_order_id: int
    leg: str
    symbol: str
    side: str
    quantity: Decimal
    price: Decimal | None
    leader_price: Decimal
    realized_pnl: Decimal
    commission: Decimal

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "relation_id": self.relation_id,
            "user_id": self.follower_user_id,
            "portfolio_id": self.portfolio_id,
            "leader_order_id": self.leader_order_id,
            "follower_order_id": self.follower_order_id,
            "leg": self.leg,
            "symbol": self.symbol,
            "side": self.side,
            "quantity": self.quantity,
            "price": self.price,
            "leader_price": self.leader_price,
            "realized_pnl": self.realized_pnl,
            "commission": self.commission,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CopySkipped(PortfolioEvent):
    """A leader fill was not copied into the follower's portfolio (`portfolio_id`)."""

    type = "copy.skipped"
    durable = True
    relation_id: int
    follower_user_id: int
    leader_order_id: int
    symbol: str
    reason: str
    detail: str
    leader_portfolio_id: int | None = None  # the copied portfolio, for the notification

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "relation_id": self.relation_id,
            "leader_portfolio_id": self.leader_portfolio_id,
            "user_id": self.follower_user_id,
            "leader_order_id": self.leader_order_id,
            "symbol": self.symbol,
            "reason": self.reason,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyEnded(PortfolioEvent):
    """A relation ended (unfollow, or the portfolio stop closed it)."""

    type = "copy.ended"
    durable = True
    relation_id: int
    follower_user_id: int
    leader_user_id: int
    reason: str
    leader_portfolio_id: int | None = None

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "relation_id": self.relation_id,
            "leader_portfolio_id": self.leader_portfolio_id,
            "user_id": self.follower_user_id,
            "leader_user_id": self.leader_user_id,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class RevenueShareSettled(DomainEvent):
    """A revenue-share settlement: both users are told, with the inputs."""

    type = "copy.settled"
    durable = True
    settlement_id: int
    relation_id: int
    leader_user_id: int
    follower_user_id: int
    reason: str
    net_pnl: Decimal
    hwm_before: Decimal
    hwm_after: Decimal
    pct: Decimal
    fee: Decimal
    payout_portfolio_id: int | None = None  # the leader's portfolio that received the fee
    leader_portfolio_id: int | None = None  # the copied portfolio

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "settlement_id": self.settlement_id,
            "relation_id": self.relation_id,
            "leader_portfolio_id": self.leader_portfolio_id,
            "leader_user_id": self.leader_user_id,
            "follower_user_id": self.follower_user_id,
            "reason": self.reason,
            "net_pnl": self.net_pnl,
            "hwm_before": self.hwm_before,
            "hwm_after": self.hwm_after,
            "pct": self.pct,
            "fee": self.fee,
            "payout_portfolio_id": self.payout_portfolio_id,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyStarted(DomainEvent):
    """Someone started copying a portfolio: its owner (the leader) is told who, into what size."""

    type = "copy.started"
    durable = True
    relation_id: int
    leader_user_id: int
    leader_portfolio_id: int
    leader_portfolio_name: str
    follower_name: str
    mode: str
    allocation: Decimal

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "relation_id": self.relation_id,
            "leader_user_id": self.leader_user_id,
            "leader_portfolio_id": self.leader_portfolio_id,
            "leader_portfolio_name": self.leader_portfolio_name,
            "follower_name": self.follower_name,
            "mode": self.mode,
            "allocation": self.allocation,
        }
