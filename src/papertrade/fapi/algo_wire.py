"""Conditional orders in Binance's two shapes: the Algo API's and the older /fapi/v1/order's."""

from typing import Any

from papertrade.fapi.translate import STATUS, dec, money, price_places, qty_places
from papertrade.models import ConditionalOrder, Order
from papertrade.trading.values import Instrument

# Algo statuses: a triggered order is FINISHED once the order it placed is done.
ALGO_STATUS = {
    "new": "NEW",
    "canceled": "CANCELED",
    "rejected": "REJECTED",
    "expired": "EXPIRED",
}


def _algo_status(row: ConditionalOrder, actual: Order | None) -> str:
    if row.status == "triggered":
        return "TRIGGERED" if actual is not None and actual.is_open else "FINISHED"
    return ALGO_STATUS.get(row.status, row.status.upper())


def algo_wire(
    row: ConditionalOrder, actual: Order | None, instrument: Instrument | None
) -> dict[str, Any]:
    """A conditional order as /fapi/v1/algoOrder answers it (`actualOrderId` once triggered)."""
    pp, qp = price_places(instrument), qty_places(instrument)
    body: dict[str, Any] = {
        "algoId": row.id,
        "clientAlgoId": row.client_algo_id,
        "algoType": "CONDITIONAL",
        "orderType": row.type.upper(),
        "symbol": row.symbol,
        "side": row.side.upper(),
        "positionSide": row.position_side,
        "timeInForce": row.time_in_force,
        "quantity": dec(row.quantity, qp) if row.quantity is not None else "0",
        "algoStatus": _algo_status(row, actual),
        "triggerPrice": dec(row.trigger_price, pp) if row.trigger_price is not None else "0",
        "price": dec(row.price, pp) if row.price is not None else "0",
        "icebergQuantity": None,
        "selfTradePreventionMode": "EXPIRE_MAKER",
        "workingType": row.working_type,
        "priceMatch": "NONE",
        "closePosition": row.close_position,
        "priceProtect": row.price_protect,
        "reduceOnly": row.reduce_only,
        "createTime": row.created_at,
        "updateTime": row.updated_at,
        "triggerTime": row.triggered_at or 0,
        "goodTillDate": 0,
    }
    if row.callback_rate is not None:
        body["callbackRate"] = dec(row.callback_rate)
        body["activatePrice"] = (
            dec(row.activation_price, pp) if row.activation_price is not None else "0"
        )
    if row.actual_order_id is not None:
        body["actualOrderId"] = str(row.actual_order_id)
        body["actualPrice"] = dec(actual.avg_price, pp) if actual is not None else "0"
    if row.reason:
        body["rejectReason"] = row.reason
    return body


def legacy_wire(
    row: ConditionalOrder, actual: Order | None, instrument: Instrument | None, *, with_time: bool
) -> dict[str, Any]:
    """A conditional order as the older /fapi/v1/order answered for stop orders: one orderId
    whose status follows the order it placed once triggered."""
    pp, qp = price_places(instrument), qty_places(instrument)
    status = ALGO_STATUS.get(row.status, row.status.upper())
    if row.status == "triggered":
        status = STATUS.get(actual.status, "NEW") if actual is not None else "NEW"
    kind = row.type.upper()
    executed = dec(actual.filled_quantity, qp) if actual is not None else dec(None, qp)
    body: dict[str, Any] = {
        "orderId": row.id,
        "symbol": row.symbol,
        "status": status,
        "clientOrderId": row.client_algo_id,
        "price": dec(row.price, pp) if row.price is not None else "0",
        "avgPrice": dec(actual.avg_price if actual else None, pp),
        "origQty": dec(row.quantity, qp) if row.quantity is not None else "0",
        "executedQty": executed,
    }
    if not with_time:
        body["cumQty"] = executed
    body.update(
        {
            "cumQuote": money(actual.filled_quote if actual else None),
            "timeInForce": row.time_in_force,
            "type": kind,
            "reduceOnly": row.reduce_only,
            "closePosition": row.close_position,
            "side": row.side.upper(),
            "positionSide": row.position_side,
            "stopPrice": dec(row.trigger_price, pp) if row.trigger_price is not None else "0",
            "workingType": row.working_type,
            "priceProtect": row.price_protect,
            "origType": kind,
            "priceMatch": "NONE",
            "selfTradePreventionMode": "EXPIRE_MAKER",
            "goodTillDate": 0,
            "updateTime": row.updated_at,
        }
    )
    if row.callback_rate is not None:
        body["priceRate"] = dec(row.callback_rate)
        body["activatePrice"] = (
            dec(row.activation_price, pp) if row.activation_price is not None else "0"
        )
    if with_time:
        body["time"] = row.created_at
    return body
