"""Enumerations of the trading kernel and the order status transition table."""

from enum import StrEnum


class Side(StrEnum):
    """Order side."""

    BUY = "buy"
    SELL = "sell"

    @property
    def sign(self) -> int:
        """+1 for BUY, -1 for SELL: the sign a fill of this side adds to a position."""
        return 1 if self is Side.BUY else -1

    @property
    def opposite(self) -> "Side":
        """The other side."""
        return Side.SELL if self is Side.BUY else Side.BUY


class OrderType(StrEnum):
    """Order type."""

    MARKET = "market"
    LIMIT = "limit"


class TimeInForce(StrEnum):
    """Time in force of a limit order (GTX = post-only)."""

    GTC = "GTC"
    IOC = "IOC"
    FOK = "FOK"
    GTX = "GTX"


class OrderStatus(StrEnum):
    """Lifecycle state of an order."""

    NEW = "new"
    PARTIALLY_FILLED = "partially_filled"
    FILLED = "filled"
    CANCELED = "canceled"
    REJECTED = "rejected"
    EXPIRED = "expired"

    @property
    def is_terminal(self) -> bool:
        """True when the order can never change again."""
        return self not in _OPEN_STATUSES


class Action(StrEnum):
    """What the native API asked for: open/increase, or close/reduce."""

    OPEN = "open"
    CLOSE = "close"


class PositionSide(StrEnum):
    """Which position an order trades: BOTH (the net position of one-way mode), or the LONG or
    SHORT position of hedge mode (Binance's positionSide)."""

    BOTH = "BOTH"
    LONG = "LONG"
    SHORT = "SHORT"

    @property
    def closing_side(self) -> Side | None:
        """The order side that reduces this hedge-mode position (None for BOTH)."""
        if self is PositionSide.LONG:
            return Side.SELL
        if self is PositionSide.SHORT:
            return Side.BUY
        return None


class MarginType(StrEnum):
    """How a symbol's position is margined: from the whole balance, or from its own margin."""

    CROSS = "cross"
    ISOLATED = "isolated"


class Liquidity(StrEnum):
    """Whether a fill added (maker) or removed (taker) liquidity."""

    MAKER = "maker"
    TAKER = "taker"


class LedgerKind(StrEnum):
    """Kind of a wallet ledger entry."""

    DEPOSIT = "deposit"
    RESET = "reset"
    REALIZED_PNL = "realized_pnl"
    COMMISSION = "commission"
    FUNDING = "funding"
    LIQUIDATION = "liquidation"
    TOP_UP = "top_up"
    WALLET_TRANSFER = "wallet_transfer"  # wallet → its owner's portfolio (both ledgers)
    RECHARGE = "recharge"  # USDT-TRC20 paid in (wallet)
    TIER_PAYMENT = "tier_payment"  # a membership period (wallet)
    TIER_REFUND = "tier_refund"  # unused days of a replaced period (wallet)
    OPERATOR_CREDIT = "operator_credit"  # an operator resolved a transfer (wallet)
    # copy trading: follower portfolio → a portfolio of the leader's (paper; before issue 30
    # the leader's wallet, whose rows migration 0019 reversed)
    PROFIT_SHARE = "profit_share"
    SUBSCRIPTION = "subscription"  # a paid subscription period: subscriber → owner (wallet)
    ISOLATED_MARGIN = "isolated_margin"  # balance ⇄ an isolated position's own margin
    # wallet credit that came from portfolios (paper), taken back out (migration 0019, wallet)
    PAPER_REVERSAL = "paper_reversal"


_OPEN_STATUSES = frozenset({OrderStatus.NEW, OrderStatus.PARTIALLY_FILLED})

_TRANSITIONS: dict[OrderStatus, frozenset[OrderStatus]] = {
    OrderStatus.NEW: frozenset(
        {
            OrderStatus.PARTIALLY_FILLED,
            OrderStatus.FILLED,
            OrderStatus.CANCELED,
            OrderStatus.EXPIRED,
            OrderStatus.REJECTED,
        }
    ),
    # Once anything has filled the order was accepted, so it can no longer be rejected.
    # partially_filled -> partially_filled is allowed: a further partial fill is a legal event.
    OrderStatus.PARTIALLY_FILLED: frozenset(
        {
            OrderStatus.PARTIALLY_FILLED,
            OrderStatus.FILLED,
            OrderStatus.CANCELED,
            OrderStatus.EXPIRED,
        }
    ),
}


def can_transition(old: OrderStatus, new: OrderStatus) -> bool:
    """True when an order may move from status `old` to status `new`."""
    return new in _TRANSITIONS.get(old, frozenset())
