"""Plain dictionaries of records for events (the WebSocket renders them natively)."""

from decimal import Decimal
from typing import Any

from papertrade.models import Position
from papertrade.orders import origin
from papertrade.orders.record import AnyOrder
from papertrade.trading import position as position_math


def order_event_data(order: AnyOrder) -> dict[str, Any]:
    return {
        "id": order.id,
        "portfolio_id": order.portfolio_id,
        "symbol": order.symbol,
        "side": order.side,
        "type": order.type,
        "action": order.action,
        "position_side": order.position_side,
        "status": order.status,
        "quantity": order.quantity,
        "size_usd": order.size_usd,
        "price": order.price,
        "avg_price": order.avg_price,
        "filled_quantity": order.filled_quantity,
        "commission": order.commission,
        "client_order_id": order.client_order_id,
        "source": order.source,
        # Who placed it when the user did not (orders/origin.py); an order a conditional order
        # placed is marked so by conditional.service when it triggers.
        "placed_by": origin.by_source(order.source),
        "updated_at": order.updated_at,
    }


def position_event_data(position: Position, mark: Decimal) -> dict[str, Any]:
    return {
        "symbol": position.symbol,
        "position_side": position.position_side,
        "side": "long" if position.quantity > 0 else "short" if position.quantity < 0 else "flat",
        "quantity": position.quantity,
        "entry_price": position.entry_price,
        "mark_price": mark,
        "unrealized_pnl": position_math.unrealized_pnl(
            position.quantity, position.entry_price, mark
        ),
        "leverage": position.leverage,
        "margin_type": position.margin_type,
        "isolated_margin": position.isolated_margin,
    }
