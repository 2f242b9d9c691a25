"""The one order command every surface builds (native, compatible, webhook, web)."""

from dataclasses import dataclass
from decimal import Decimal

from papertrade.trading.enums import Action, OrderType, Side, TimeInForce


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
