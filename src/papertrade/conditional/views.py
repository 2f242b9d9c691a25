"""A conditional order as a plain dictionary (events and the native API render it)."""

from typing import Any

from papertrade.conditional.record import ConditionalRecord
from papertrade.models import ConditionalOrder


def conditional_data(row: ConditionalOrder | ConditionalRecord) -> dict[str, Any]:
    return {
        "id": row.id,
        "portfolio_id": row.portfolio_id,
        "symbol": row.symbol,
        "side": row.side,
        "position_side": row.position_side,
        "type": row.type,
        "working_type": row.working_type,
        "trigger_price": row.trigger_price,
        "price": row.price,
        "quantity": row.quantity,
        "close_position": row.close_position,
        "reduce_only": row.reduce_only,
        "price_protect": row.price_protect,
        "callback_rate": row.callback_rate,
        "activation_price": row.activation_price,
        "trailing_extreme": row.trailing_extreme,
        "time_in_force": row.time_in_force,
        "status": row.status,
        "client_algo_id": row.client_algo_id,
        "source": row.source,
        "actual_order_id": row.actual_order_id,
        "reason": row.reason,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
        "triggered_at": row.triggered_at,
    }
