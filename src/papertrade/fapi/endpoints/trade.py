"""Signed trading endpoints: place, query and cancel orders; open orders; history; own trades."""

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.conditional import service as conditional_service
from papertrade.conditional.errors import ConditionalNotFound, ConditionalNotOpen
from papertrade.fapi import algo_wire, queries, translate
from papertrade.fapi.dispatch import Call, endpoint
from papertrade.fapi.endpoints import algo
from papertrade.fapi.errors import FapiError, invalid_data, not_required
from papertrade.fapi.order_checks import CLIENT_ID_RE, SANE_LIMIT, check_precision
from papertrade.fapi.params import Params
from papertrade.kit.ids import is_id
from papertrade.models import ConditionalOrder, Order
from papertrade.orders import service as order_service
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.errors import OrderNotFound
from papertrade.orders.pricing import instrument_of
from papertrade.orders.writer import writer_of
from papertrade.portfolios import service as portfolio_service
from papertrade.trading.enums import Action, OrderType, Side, TimeInForce
from papertrade.trading.values import Instrument

CONDITIONAL = {"STOP", "STOP_MARKET", "TAKE_PROFIT", "TAKE_PROFIT_MARKET", "TRAILING_STOP_MARKET"}
NOT_FOR_PLAIN_ORDERS = ("stopPrice", "activationPrice", "callbackRate", "priceRate")
MAX_OPEN_ORDERS_LISTED = 10_000


def _order_type(params: Params) -> OrderType:
    value = params.text("type", required=True, max_len=30)
    assert value is not None
    upper = value.upper()
    if upper not in ("MARKET", "LIMIT"):
        raise FapiError(400, -1116, "Invalid orderType.")
    return OrderType(upper.lower())


def _time_in_force(params: Params, order_type: OrderType) -> TimeInForce:
    if order_type is OrderType.MARKET:
        return TimeInForce.GTC
    value = params.choice(
        "timeInForce",
        {"GTC", "IOC", "FOK", "GTX"},
        required=True,
        error=FapiError(400, -1115, "Invalid timeInForce. Use GTC, IOC, FOK or GTX (post-only)."),
    )
    assert value is not None
    return TimeInForce(value)


def _refuse_unsupported(params: Params, order_type: OrderType) -> None:
    if params.boolean("closePosition"):
        raise not_required("closePosition")
    for name in NOT_FOR_PLAIN_ORDERS:
        if params.has(name):
            raise not_required(name)
    if order_type is OrderType.MARKET and params.has("price"):
        raise not_required("price")
    params.choice(
        "priceMatch",
        {"NONE"},
        default="NONE",
        error=invalid_data("priceMatch", "Papertrade does not support price match; send a price."),
    )


def build_command(call: Call, instrument: Instrument) -> PlaceOrder:
    """A PlaceOrder from Binance's parameters, or the error Binance would give."""
    params = call.params
    side = params.choice(
        "side", {"BUY", "SELL"}, required=True, error=FapiError(400, -1117, "Invalid side.")
    )
    order_type = _order_type(params)
    _refuse_unsupported(params, order_type)
    quantity = params.decimal("quantity", required=True)
    price = params.decimal("price", required=order_type is OrderType.LIMIT)
    time_in_force = _time_in_force(params, order_type)
    client_id = params.values.get("newClientOrderId") or None
    if client_id is not None and not CLIENT_ID_RE.match(client_id):
        raise FapiError(400, -4015, "Client order id is not valid.")
    reduce_only = params.boolean("reduceOnly")
    assert quantity is not None
    assert side is not None
    if quantity > SANE_LIMIT:
        raise FapiError(400, -4005, "Quantity greater than max quantity.")
    if price is not None and price > SANE_LIMIT:
        raise FapiError(400, -4002, "Price greater than max price.")
    check_precision(quantity, instrument.quantity_precision)
    if price is not None:
        check_precision(price, instrument.price_precision)
    return PlaceOrder(
        portfolio_id=call.portfolio_id,
        symbol=instrument.symbol,
        side=Side(side.lower()),
        type=order_type,
        action=Action.CLOSE if reduce_only else Action.OPEN,
        quantity=quantity,
        price=price,
        time_in_force=time_in_force,
        client_order_id=client_id,
        source="fapi",
        strict_reduce_side=True,
        position_side=algo.position_side_of(params),
        reduce_only_sent=reduce_only,
    )


def _instrument(call: Call) -> Instrument:
    symbol = call.params.symbol()
    assert symbol is not None
    return instrument_of(call.ctx.market, symbol)


def _conditional_type(params: Params) -> str | None:
    """The stop type of an older-style conditional order, or None for MARKET and LIMIT."""
    value = params.values.get("type", "").upper()
    return value if value in CONDITIONAL else None


@endpoint("POST", "/v1/order", signed=True, orders=1)
async def new_order(call: Call) -> Any:
    instrument = _instrument(call)
    kind = _conditional_type(call.params)
    if kind is not None:
        # Binance moved these to the Algo API (-4120); bots that still send them get the
        # older answer: a stop order whose orderId follows the order it places.
        command_ = algo.parse_conditional(call, instrument, kind, legacy=True)
        return algo_wire.legacy_wire(
            await algo.place(call, command_), None, instrument, with_time=False
        )
    command = build_command(call, instrument)
    call.params.choice("newOrderRespType", {"ACK", "RESULT"}, default="ACK")
    # ACK and RESULT answer alike: the order is already final (a MARKET order has filled
    # inside this request), so both show its real state rather than a placeholder NEW.
    order = await writer_of(call.request).place(call.principal, command)
    return translate.order_wire(order, instrument, with_time=False)


async def _find(
    call: Call, session: AsyncSession, instrument: Instrument, *, for_update: bool = False
) -> Order:
    """The order named by orderId or origClientOrderId, in the key's portfolio and symbol."""
    params = call.params
    order_id = params.integer("orderId", low=1)
    client_id = params.text("origClientOrderId", max_len=64)
    if order_id is not None:
        if not is_id(order_id):  # a valid Binance id (int64) past ours: no such order
            raise OrderNotFound("Order not found.")
        order, _ = await order_service.get_owned_order(
            session, call.principal, order_id, for_update=for_update
        )
    elif client_id is not None:
        order = await order_service.find_by_client_id(
            session, call.principal, call.portfolio_id, client_id
        )
    else:
        raise FapiError(400, -1102, "Either orderId or origClientOrderId must be sent.")
    if order.symbol != instrument.symbol:
        raise OrderNotFound("Order not found.")
    return order


async def _find_conditional(
    call: Call, session: AsyncSession, instrument: Instrument, *, for_update: bool = False
) -> ConditionalOrder:
    """A conditional order named like an order (its id comes from the same sequence)."""
    try:
        row = await algo.find(
            call,
            session,
            id_name="orderId",
            client_name="origClientOrderId",
            for_update=for_update,
        )
    except ConditionalNotFound as exc:
        raise OrderNotFound("Order not found.") from exc
    if row.symbol != instrument.symbol:
        raise OrderNotFound("Order not found.")
    return row


@endpoint("GET", "/v1/order", signed=True)
async def query_order(call: Call) -> Any:
    instrument = _instrument(call)
    async with call.ctx.db.reader() as session:
        try:
            order = await _find(call, session, instrument)
        except OrderNotFound:
            row = await _find_conditional(call, session, instrument)
            actual = await algo.actual_orders(session, [row])
            return algo_wire.legacy_wire(
                row, actual.get(row.actual_order_id or 0), instrument, with_time=True
            )
    return translate.order_wire(order, instrument, with_time=True)


@endpoint("GET", "/v1/openOrder", signed=True)
async def query_open_order(call: Call) -> Any:
    instrument = _instrument(call)
    async with call.ctx.db.reader() as session:
        order = await _find(call, session, instrument)
    if not order.is_open:
        raise FapiError(400, -2013, "Order does not exist. (It is not open.)")
    return translate.order_wire(order, instrument, with_time=True)


@endpoint("DELETE", "/v1/order", signed=True)
async def cancel_order(call: Call) -> Any:
    instrument = _instrument(call)
    try:
        async with call.ctx.transaction() as uow:
            try:
                order = await _find(call, uow.session, instrument, for_update=True)
            except OrderNotFound:
                row = await _find_conditional(call, uow.session, instrument, for_update=True)
                await conditional_service.cancel(uow, row)
                return algo_wire.legacy_wire(row, None, instrument, with_time=False)
            await order_service.cancel(uow, order)
    except (OrderNotFound, ConditionalNotOpen) as exc:
        raise FapiError(400, -2011, f"Unknown order sent. ({exc.message.rstrip('.')})") from exc
    return translate.order_wire(order, instrument, with_time=False)


@endpoint("DELETE", "/v1/allOpenOrders", signed=True)
async def cancel_all_orders(call: Call) -> Any:
    instrument = _instrument(call)
    async with call.ctx.transaction() as uow:
        await portfolio_service.get_owned(
            uow.session, call.principal, call.portfolio_id, for_update=True
        )
        await order_service.cancel_all(uow, call.portfolio_id, instrument.symbol)
        # Stop orders placed the older way were open orders on Binance: they go too.
        for row in await conditional_service.list_conditional(
            uow.session, call.portfolio_id, status="open", symbol=instrument.symbol, limit=1000
        ):
            if row.source == "fapi-order":
                await conditional_service.cancel(uow, row)
    return {"code": 200, "msg": "The operation of cancel all open order is done."}


@endpoint("GET", "/v1/openOrders", signed=True, weight=lambda p: 1 if p.has("symbol") else 40)
async def open_orders(call: Call) -> Any:
    symbol = call.params.symbol(required=False)
    instruments = call.ctx.market.instruments() if call.ctx.market else {}
    if symbol is not None:
        instrument_of(call.ctx.market, symbol)
    async with call.ctx.db.reader() as session:
        await portfolio_service.get_owned(session, call.principal, call.portfolio_id)
        orders = await order_service.list_orders(
            session, call.portfolio_id, status="open", symbol=symbol, limit=MAX_OPEN_ORDERS_LISTED
        )
        stops = await conditional_service.list_conditional(
            session, call.portfolio_id, status="open", symbol=symbol, limit=MAX_OPEN_ORDERS_LISTED
        )
    listed = [
        translate.order_wire(o, instruments.get(o.symbol), with_time=True) for o in reversed(orders)
    ]
    # Stop orders placed the older way are listed as Binance listed them before the Algo API.
    listed += [
        algo_wire.legacy_wire(row, None, instruments.get(row.symbol), with_time=True)
        for row in reversed(stops)
        if row.source == "fapi-order"
    ]
    return listed


@endpoint("GET", "/v1/allOrders", signed=True, weight=5)
async def all_orders(call: Call) -> Any:
    instrument = _instrument(call)
    params = call.params
    from_id = params.integer("orderId", low=0)
    start = params.integer("startTime", low=0)
    end = params.integer("endTime", low=0)
    limit = params.limit(500, 1000)
    async with call.ctx.db.reader() as session:
        await portfolio_service.get_owned(session, call.principal, call.portfolio_id)
        orders = await queries.orders_window(
            session,
            call.portfolio_id,
            instrument.symbol,
            from_id=from_id,
            start_ms=start,
            end_ms=end,
            limit=limit,
        )
    return [translate.order_wire(o, instrument, with_time=True) for o in orders]


@endpoint("GET", "/v1/forceOrders", signed=True, weight=lambda p: 20 if p.has("symbol") else 50)
async def force_orders(call: Call) -> Any:
    """The user's liquidation orders (ccxt's fetch_my_liquidations). Auto-deleveraging is not
    simulated, so `autoCloseType=ADL` finds none."""
    params = call.params
    symbol = params.symbol(required=False)
    if symbol is not None:
        instrument_of(call.ctx.market, symbol)  # an unknown symbol is -1121, as on Binance
    kind = params.choice("autoCloseType", {"LIQUIDATION", "ADL"})
    start = params.integer("startTime", low=0)
    end = params.integer("endTime", low=0)
    limit = params.limit(50, 100)
    async with call.ctx.db.reader() as session:
        await portfolio_service.get_owned(session, call.principal, call.portfolio_id)
        if kind == "ADL":
            return []
        orders = await queries.orders_window(
            session,
            call.portfolio_id,
            symbol,
            from_id=None,
            start_ms=start,
            end_ms=end,
            limit=limit,
            source="liquidation",
            default_days=7,
        )
    instruments = call.ctx.market.instruments() if call.ctx.market is not None else {}
    return [translate.order_wire(o, instruments.get(o.symbol), with_time=True) for o in orders]


@endpoint("GET", "/v1/userTrades", signed=True, weight=5)
async def user_trades(call: Call) -> Any:
    instrument = _instrument(call)
    params = call.params
    order_id = params.integer("orderId", low=0)
    from_id = params.integer("fromId", low=0)
    start = params.integer("startTime", low=0)
    end = params.integer("endTime", low=0)
    limit = params.limit(500, 1000)
    if from_id is not None and (start is not None or end is not None):
        raise FapiError(400, -1128, "Combination of optional parameters invalid.")
    async with call.ctx.db.reader() as session:
        await portfolio_service.get_owned(session, call.principal, call.portfolio_id)
        fills = await queries.fills_window(
            session,
            call.portfolio_id,
            instrument.symbol,
            order_id=order_id,
            from_id=from_id,
            start_ms=start,
            end_ms=end,
            limit=limit,
        )
    return [translate.trade_wire(f, instrument) for f in fills]
