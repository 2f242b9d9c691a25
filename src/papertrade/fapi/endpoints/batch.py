"""Batches (Binance's `batchOrders`): up to five new orders, or up to ten cancels, in one signed
request. Each item runs as its own request would, one after the other in the order sent, and
answers for itself in the list: the order, or the Binance error that request would have got.
One item refused never undoes or stops the others."""

import logging
from typing import Any

import orjson

from papertrade.errors import PapertradeError
from papertrade.fapi.dispatch import Call, endpoint
from papertrade.fapi.endpoints.trade import cancel_order, new_order
from papertrade.fapi.errors import FapiError, domain_to_fapi, invalid_data, mandatory
from papertrade.fapi.params import CONTROL_RE, MAX_PARAMS, Params, json_value_text
from papertrade.faults.outage import as_unavailable
from papertrade.trading.errors import TradingRuleError

log = logging.getLogger("papertrade.fapi")
MAX_PLACED = 5
MAX_CANCELLED = 10
MAX_JSON = 16_384  # five orders' parameters fit in a tenth of it


def _json_list(params: Params, name: str, most: int) -> list[Any] | None:
    """The JSON array sent as `name` (None when it is absent), of 1 to `most` items. The name
    is also taken in lower case, as ccxt sends the cancel lists and Binance reads them."""
    if not params.has(name) and params.has(name.lower()):
        name = name.lower()
    raw = params.text(name, max_len=MAX_JSON)
    if raw is None:
        return None
    try:
        items = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise invalid_data(name, "It must be a JSON array.") from None
    if not isinstance(items, list) or not items:
        raise invalid_data(name, "It must be a JSON array of at least one item.")
    if len(items) > most:
        raise invalid_data(name, f"It takes at most {most} items.")
    return items


def _as_text(name: str, value: Any) -> str:
    text = json_value_text(value)
    if text is None:
        raise invalid_data(name, "Values must be strings, numbers or booleans.")
    return text


def _order_params(item: Any) -> Params:
    """One order's parameters, held to the rules of a query string's."""
    if not isinstance(item, dict):
        raise invalid_data("batchOrders", "Each order must be a JSON object.")
    if len(item) > MAX_PARAMS:
        raise FapiError(400, -1101, f"Too many parameters; expected at most {MAX_PARAMS}.")
    return _checked({str(name): _as_text(str(name), value) for name, value in item.items()})


def _checked(values: dict[str, str]) -> Params:
    """Parameters that never held a control character, as a query string's never do."""
    for name, value in values.items():
        if CONTROL_RE.search(name) or CONTROL_RE.search(value):
            shown = CONTROL_RE.sub("?", name[:40])
            raise FapiError(400, -1100, f"Illegal characters found in parameter '{shown}'.")
    return Params(values)


def _placed_count(params: Params) -> int:
    """What a batch charges against the order limits: one per order sent (its own parameter
    errors, if any, are answered by the handler, as one order would be)."""
    try:
        items = _json_list(params, "batchOrders", MAX_PLACED)
    except FapiError:
        return 1
    return len(items) if items else 1


async def _each(call: Call, item: Params, handler: Any) -> Any:
    """One item, as its own request: the handler's answer, or its error in Binance's shape."""
    try:
        return await handler(Call(call.request, call.ctx, item, call.caller, call.meter))
    except Exception as exc:
        unavailable = as_unavailable(exc)
        if unavailable is not None:  # the database failed for this item: it says so, the
            call.ctx.db.outages.failed(exc)  # others stand as they went
            exc = unavailable
        elif not isinstance(exc, PapertradeError | TradingRuleError):
            log.exception("unhandled error in a batch item on %s", call.request.url.path)
        _, code, msg = domain_to_fapi(exc)
        return {"code": code, "msg": msg}


@endpoint("POST", "/v1/batchOrders", signed=True, weight=5, orders=_placed_count)
async def place_batch(call: Call) -> list[Any]:
    items = _json_list(call.params, "batchOrders", MAX_PLACED)
    if items is None:
        raise mandatory("batchOrders")
    answers = []
    for item in items:
        try:
            params = _order_params(item)
        except FapiError as exc:
            answers.append(_refused(exc))
            continue
        answers.append(await _each(call, params, new_order))
    return answers


@endpoint("DELETE", "/v1/batchOrders", signed=True, weight=1)
async def cancel_batch(call: Call) -> list[Any]:
    symbol = call.params.symbol()
    ids = _json_list(call.params, "orderIdList", MAX_CANCELLED)
    client_ids = _json_list(call.params, "origClientOrderIdList", MAX_CANCELLED)
    if ids is not None and client_ids is not None:
        raise FapiError(400, -1128, "Send orderIdList or origClientOrderIdList, not both.")
    if ids is None and client_ids is None:
        raise FapiError(400, -1102, "Either orderIdList or origClientOrderIdList must be sent.")
    name, named = ("orderId", ids) if ids is not None else ("origClientOrderId", client_ids)
    answers = []
    for value in named or []:
        if name == "orderId" and (isinstance(value, bool) or not isinstance(value, int | str)):
            answers.append(_refused(invalid_data("orderIdList", "Order ids are integers.")))
            continue
        if name == "origClientOrderId" and not isinstance(value, str):
            answers.append(_refused(invalid_data("origClientOrderIdList", "Ids are strings.")))
            continue
        try:
            item = _checked({"symbol": str(symbol), name: str(value)})
        except FapiError as exc:
            answers.append(_refused(exc))
            continue
        answers.append(await _each(call, item, cancel_order))
    return answers


def _refused(exc: FapiError) -> dict[str, Any]:
    return {"code": exc.fapi_code, "msg": exc.message}
