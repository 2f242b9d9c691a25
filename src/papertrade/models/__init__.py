"""Every ORM table, one module each; importing this package registers them all."""

from papertrade.models.api_key import ApiKey
from papertrade.models.chain import Attestation, AttestationAnchor, ChainEntry, ChainHead
from papertrade.models.comment import Comment
from papertrade.models.compat_key import CompatKey
from papertrade.models.conditional_order import ConditionalOrder
from papertrade.models.copytrading import CopyLeader, CopyRelation, CopySettlement, CopyTrade
from papertrade.models.equity import EquitySnapshot
from papertrade.models.feedback import Feedback, FeedbackScreenshot
from papertrade.models.fill import Fill
from papertrade.models.funding import FundingSettlement
from papertrade.models.idempotency import IdempotencyRecord
from papertrade.models.inbound import InboundEvent, InboundSource
from papertrade.models.job import JobRecord
from papertrade.models.launch import InviteCode, InviteUse, WaitlistEntry
from papertrade.models.ledger import LedgerEntry
from papertrade.models.live import LiveAccount, LiveOrder, LiveReconciliation
from papertrade.models.mail import (
    AccountToken,
    EmailDigest,
    EmailMessage,
    EmailState,
    EmailSuppression,
)
from papertrade.models.membership import AiUsage, Membership
from papertrade.models.notification import Notification, NotificationPreference
from papertrade.models.order import Order
from papertrade.models.outbox import OutboxCursor, OutboxEvent
from papertrade.models.portfolio import Portfolio
from papertrade.models.position import Position
from papertrade.models.position_margin import PositionMarginChange
from papertrade.models.profile import Profile
from papertrade.models.recharge import RechargeOrder, TronTransfer
from papertrade.models.signal import Signal, SignalDedupe
from papertrade.models.strategy import (
    CandleCache,
    Strategy,
    StrategyBacktest,
    StrategyDeployment,
    StrategySignal,
    StrategyVersion,
)
from papertrade.models.subscription import Subscription, SubscriptionPrice
from papertrade.models.telegram import (
    TelegramBinding,
    TelegramChannel,
    TelegramLink,
    TelegramMessage,
    TelegramUpdate,
)
from papertrade.models.user import User, UserSession
from papertrade.models.wallet import Wallet, WalletEntry
from papertrade.models.webhook_token import WebhookToken

__all__ = [
    "AccountToken",
    "AiUsage",
    "ApiKey",
    "Attestation",
    "AttestationAnchor",
    "CandleCache",
    "ChainEntry",
    "ChainHead",
    "Comment",
    "CompatKey",
    "ConditionalOrder",
    "CopyLeader",
    "CopyRelation",
    "CopySettlement",
    "CopyTrade",
    "EmailDigest",
    "EmailMessage",
    "EmailState",
    "EmailSuppression",
    "EquitySnapshot",
    "Feedback",
    "FeedbackScreenshot",
    "Fill",
    "FundingSettlement",
    "IdempotencyRecord",
    "InboundEvent",
    "InboundSource",
    "InviteCode",
    "InviteUse",
    "JobRecord",
    "LedgerEntry",
    "LiveAccount",
    "LiveOrder",
    "LiveReconciliation",
    "Membership",
    "Notification",
    "NotificationPreference",
    "Order",
    "OutboxCursor",
    "OutboxEvent",
    "Portfolio",
    "Position",
    "PositionMarginChange",
    "Profile",
    "RechargeOrder",
    "Signal",
    "SignalDedupe",
    "Strategy",
    "StrategyBacktest",
    "StrategyDeployment",
    "StrategySignal",
    "StrategyVersion",
    "Subscription",
    "SubscriptionPrice",
    "TelegramBinding",
    "TelegramChannel",
    "TelegramLink",
    "TelegramMessage",
    "TelegramUpdate",
    "TronTransfer",
    "User",
    "UserSession",
    "WaitlistEntry",
    "Wallet",
    "WalletEntry",
    "WebhookToken",
]
