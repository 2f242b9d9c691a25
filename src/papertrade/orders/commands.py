"""The one order command every surface builds (native, compatible, webhook, web)."""

from dataclasses import dataclass
from decimal import Decimal

from papertrade.trading.enums import Action, OrderType, PositionSide, Side, TimeInForce


@dataclass(frozen=True, slots=True)
class PlaceOrder:
    """Place an order. Give `quantity` (base units) or `size_usd` (converted at the reference
    price: the limit price, or the mark for market orders). For `action=close` the side is
    forced to the reducing direction and the size is capped at the position."""

    portfolio_id: int
    symbol: str
    side: Side | None
    type: OrderType
    action: Action = Action.OPEN
    quantity: Decimal | None = None
    size_usd: Decimal | None = None
    price: Decimal | None = None
    time_in_force: TimeInForce = TimeInForce.GTC
    client_order_id: str | None = None
    source: str = "v1"
    # Binance's reduceOnly rejects an order on the wrong side instead of flipping it.
    strict_reduce_side: bool = False
    # BOTH (one-way mode), LONG or SHORT (hedge mode). None: BOTH in one-way mode; in hedge mode
    # the side the order's direction implies (a buy opens or a sell closes the LONG position).
    position_side: PositionSide | None = None
    # The caller sent a reduce-only flag (Binance's reduceOnly): refused in hedge mode, where an
    # order closes by naming its position side.
    reduce_only_sent: bool = False
