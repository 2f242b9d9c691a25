"""Every ORM table, one module each; importing this package registers them all."""

from papertrade.models.api_key import ApiKey
from papertrade.models.chain import Attestation, AttestationAnchor, ChainEntry, ChainHead
from papertrade.models.compat_key import CompatKey
from papertrade.models.equity import EquitySnapshot
from papertrade.models.fill import Fill
from papertrade.models.funding import FundingSettlement
from papertrade.models.idempotency import IdempotencyRecord
from papertrade.models.job import JobRecord
from papertrade.models.ledger import LedgerEntry
from papertrade.models.live import LiveAccount, LiveOrder
from papertrade.models.order import Order
from papertrade.models.outbox import OutboxCursor, OutboxEvent
from papertrade.models.portfolio import Portfolio
from papertrade.models.position import Position
from papertrade.models.signal import Signal, SignalDedupe
from papertrade.models.user import User, UserSession
from papertrade.models.webhook_token import WebhookToken

__all__ = [
    "ApiKey",
    "Attestation",
    "AttestationAnchor",
    "ChainEntry",
    "ChainHead",
    "CompatKey",
    "EquitySnapshot",
    "Fill",
    "FundingSettlement",
    "IdempotencyRecord",
    "JobRecord",
    "LedgerEntry",
    "LiveAccount",
    "LiveOrder",
    "Order",
    "OutboxCursor",
    "OutboxEvent",
    "Portfolio",
    "Position",
    "Signal",
    "SignalDedupe",
    "User",
    "UserSession",
    "WebhookToken",
]
