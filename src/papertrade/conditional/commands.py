"""The one command every surface builds to place a conditional order."""

from dataclasses import dataclass
from decimal import Decimal

from papertrade.trading.conditional import ConditionalType, WorkingType
from papertrade.trading.enums import PositionSide, Side, TimeInForce


@dataclass(frozen=True, slots=True)
class PlaceConditional:
    """A stop, take-profit or trailing stop. Give `quantity`, or `close_position` to close
    whatever position there is when it triggers (TP/SL of a position)."""

    portfolio_id: int
    symbol: str
    side: Side
    type: ConditionalType
    trigger_price: Decimal | None = None
    price: Decimal | None = None
    quantity: Decimal | None = None
    close_position: bool = False
    reduce_only: bool = False
    working_type: WorkingType = WorkingType.CONTRACT_PRICE
    price_protect: bool = False
    callback_rate: Decimal | None = None
    activation_price: Decimal | None = None
    time_in_force: TimeInForce = TimeInForce.GTC
    client_algo_id: str | None = None
    source: str = "v1"
    # BOTH in one-way mode, LONG or SHORT in hedge mode; None: what the direction implies.
    position_side: PositionSide | None = None
    # The entry these exits protect (/v1's attached TP/SL, a strategy's, an alert's): the order
    # the stop places later is traced back to where the entry came from (live mirroring).
    origin_order_id: int | None = None
