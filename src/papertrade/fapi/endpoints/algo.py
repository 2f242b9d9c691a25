"""Conditional orders on the compatible surface: the Algo API (`/fapi/v1/algoOrder`,
`openAlgoOrders`, `allAlgoOrders`) and the stop types of the older `/fapi/v1/order`, which
Binance now refuses (-4120) and many bots still send; here both work."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.conditional import service as conditional_service
from papertrade.conditional.commands import PlaceConditional
from papertrade.conditional.errors import ConditionalNotFound, ConditionalNotOpen
from papertrade.fapi.algo_wire import algo_wire
from papertrade.fapi.dispatch import Call, endpoint
from papertrade.fapi.errors import FapiError
from papertrade.fapi.order_checks import CLIENT_ID_RE, SANE_LIMIT, check_precision
from papertrade.fapi.params import Params
from papertrade.kit.ids import is_id
from papertrade.models import ConditionalOrder, Order
from papertrade.orders.pricing import Venue, instrument_of
from papertrade.portfolios import service as portfolio_service
from papertrade.trading.conditional import ConditionalType, WorkingType
from papertrade.trading.enums import PositionSide, Side, TimeInForce
from papertrade.trading.values import Instrument

CONDITIONAL_TYPES = {kind.value.upper(): kind for kind in ConditionalType}
CLIENT_ID_PATTERN = r"^[\.A-Z\:/a-z0-9_-]{1,36}$"
MAX_LISTED = 1000


def position_side_of(params: Params) -> PositionSide:
    """Binance's positionSide: BOTH unless sent (the portfolio's mode judges it when placed)."""
    value = params.choice(
        "positionSide",
        {"BOTH", "LONG", "SHORT"},
        default="BOTH",
        error=FapiError(400, -4060, "Invalid position side."),
    )
    return PositionSide(value or "BOTH")


def parse_conditional(
    call: Call, instrument: Instrument, kind_name: str, *, legacy: bool
) -> PlaceConditional:
    """A PlaceConditional from Binance's parameters (Algo names, or the older order's)."""
    params = call.params
    side = params.choice(
        "side", {"BUY", "SELL"}, required=True, error=FapiError(400, -1117, "Invalid side.")
    )
    position_side = position_side_of(params)
    kind = CONDITIONAL_TYPES[kind_name]
    close_position = params.boolean("closePosition")
    quantity = params.decimal("quantity", required=not close_position)
    price = params.decimal("price", required=kind.order_type.value == "limit")
    trigger_names = ("stopPrice", "triggerPrice") if legacy else ("triggerPrice", "stopPrice")
    trigger = next((params.decimal(name) for name in trigger_names if params.has(name)), None)
    if trigger is None and not kind.is_trailing:
        raise FapiError(
            400,
            -1102,
            f"Mandatory parameter '{trigger_names[0]}' was not sent, was empty/null, or malformed.",
        )
    activation = next(
        (params.decimal(n) for n in ("activatePrice", "activationPrice") if params.has(n)), None
    )
    callback = params.decimal("callbackRate", required=kind.is_trailing)
    working = params.choice(
        "workingType", {"MARK_PRICE", "CONTRACT_PRICE"}, default="CONTRACT_PRICE"
    )
    tif = params.choice(
        "timeInForce",
        {"GTC", "IOC", "FOK", "GTX"},
        default="GTC",
        error=FapiError(400, -1115, "Invalid timeInForce. Use GTC, IOC, FOK or GTX (post-only)."),
    )
    client_name = "newClientOrderId" if legacy else "clientAlgoId"
    client_id = params.values.get(client_name) or params.values.get("newClientOrderId") or None
    if client_id is not None and not CLIENT_ID_RE.match(client_id):
        raise FapiError(400, -4015, f"Client order id is not valid ({CLIENT_ID_PATTERN}).")
    for value in (quantity, price, trigger, activation):
        if value is not None and value > SANE_LIMIT:
            raise FapiError(400, -4005, "Quantity or price greater than the maximum.")
    if quantity is not None:
        check_precision(quantity, instrument.quantity_precision)
    for value in (price, trigger, activation):
        if value is not None:
            check_precision(value, instrument.price_precision)
    if close_position and params.boolean("reduceOnly"):
        raise FapiError(400, -1106, "Parameter 'reduceOnly' sent when not required.")
    assert side is not None
    assert working is not None
    assert tif is not None
    return PlaceConditional(
        portfolio_id=call.portfolio_id,
        symbol=instrument.symbol,
        side=Side(side.lower()),
        type=kind,
        trigger_price=trigger,
        price=price,
        quantity=None if close_position else quantity,
        close_position=close_position,
        reduce_only=params.boolean("reduceOnly"),
        working_type=WorkingType(working),
        price_protect=params.boolean("priceProtect"),
        callback_rate=callback,
        activation_price=activation,
        time_in_force=TimeInForce(tif),
        client_algo_id=client_id,
        source="fapi-order" if legacy else "fapi",
        position_side=position_side,
    )


async def place(call: Call, command: PlaceConditional) -> ConditionalOrder:
    venue = Venue.of(call.ctx)

    def run(uow: Any) -> ConditionalOrder:
        row = conditional_service.place(uow, venue, call.principal, command)
        uow.session.expunge(row)  # read after the commit, outside the session
        return row

    return await call.ctx.run_unit(run)


async def actual_orders(
    session: AsyncSession, rows: Sequence[ConditionalOrder]
) -> dict[int, Order]:
    """The orders that triggered conditional orders placed, by id."""
    ids = [row.actual_order_id for row in rows if row.actual_order_id is not None]
    if not ids:
        return {}
    found = await session.scalars(select(Order).where(Order.id.in_(ids)))
    return {order.id: order for order in found}


async def find(
    call: Call, session: AsyncSession, *, id_name: str, client_name: str, for_update: bool = False
) -> ConditionalOrder:
    """The conditional order named by its id or client id, in the key's portfolio."""
    params = call.params
    conditional_id = params.integer(id_name, low=1)
    client_id = params.text(client_name, max_len=64)
    if conditional_id is not None:
        if not is_id(conditional_id):
            raise ConditionalNotFound("Conditional order not found.")
        row = await conditional_service.get_owned(
            session, call.principal, conditional_id, for_update=for_update
        )
        if row.portfolio_id != call.portfolio_id:
            raise ConditionalNotFound("Conditional order not found.")
        return row
    if client_id is not None:
        return await conditional_service.find_by_client_id(
            session, call.principal, call.portfolio_id, client_id
        )
    raise FapiError(400, -1102, f"Either {id_name} or {client_name} must be sent.")


def _instruments(call: Call) -> dict[str, Instrument]:
    return dict(call.ctx.market.instruments()) if call.ctx.market else {}


@endpoint("POST", "/v1/algoOrder", signed=True, orders=1)
async def new_algo_order(call: Call) -> Any:
    params = call.params
    params.choice(
        "algoType",
        {"CONDITIONAL"},
        required=True,
        error=FapiError(400, -1116, "Invalid algoType; Papertrade offers CONDITIONAL."),
    )
    symbol = params.symbol()
    assert symbol is not None
    instrument = instrument_of(call.ctx.market, symbol)
    kind_name = _conditional_type(params)
    row = await place(call, parse_conditional(call, instrument, kind_name, legacy=False))
    return algo_wire(row, None, instrument)


def _conditional_type(params: Params) -> str:
    value = params.text("type", required=True, max_len=30)
    assert value is not None
    if value.upper() not in CONDITIONAL_TYPES:
        raise FapiError(400, -1116, "Invalid orderType.")
    return value.upper()


@endpoint("GET", "/v1/algoOrder", signed=True)
async def query_algo_order(call: Call) -> Any:
    async with call.ctx.db.reader() as session:
        row = await find(call, session, id_name="algoId", client_name="clientAlgoId")
        actual = await actual_orders(session, [row])
    instrument = _instruments(call).get(row.symbol)
    return algo_wire(row, actual.get(row.actual_order_id or 0), instrument)


@endpoint("DELETE", "/v1/algoOrder", signed=True)
async def cancel_algo_order(call: Call) -> Any:
    try:
        async with call.ctx.transaction() as uow:
            row = await find(
                call, uow.session, id_name="algoId", client_name="clientAlgoId", for_update=True
            )
            await conditional_service.cancel(uow, row)
    except (ConditionalNotFound, ConditionalNotOpen) as exc:
        raise FapiError(400, -2011, f"Unknown order sent. ({exc.message.rstrip('.')})") from exc
    return {"algoId": row.id, "clientAlgoId": row.client_algo_id, "code": "200", "msg": "success"}


@endpoint("DELETE", "/v1/algoOpenOrders", signed=True)
async def cancel_all_algo_orders(call: Call) -> Any:
    symbol = call.params.symbol()
    assert symbol is not None
    instrument_of(call.ctx.market, symbol)
    async with call.ctx.transaction() as uow:
        # Locked before its conditional rows, as a trigger takes them (conditional/service.py).
        await portfolio_service.get_owned(
            uow.session, call.principal, call.portfolio_id, for_update=True
        )
        await conditional_service.cancel_all(uow, call.portfolio_id, symbol)
    return {"code": 200, "msg": "The operation of cancel all open order is done."}


@endpoint("GET", "/v1/openAlgoOrders", signed=True, weight=lambda p: 1 if p.has("symbol") else 40)
async def open_algo_orders(call: Call) -> Any:
    symbol = call.params.symbol(required=False)
    if symbol is not None:
        instrument_of(call.ctx.market, symbol)
    async with call.ctx.db.reader() as session:
        await portfolio_service.get_owned(session, call.principal, call.portfolio_id)
        rows = await conditional_service.list_conditional(
            session, call.portfolio_id, status="open", symbol=symbol, limit=MAX_LISTED
        )
    instruments = _instruments(call)
    return [algo_wire(row, None, instruments.get(row.symbol)) for row in reversed(rows)]


@endpoint("GET", "/v1/allAlgoOrders", signed=True, weight=5)
async def all_algo_orders(call: Call) -> Any:
    params = call.params
    symbol = params.symbol()
    assert symbol is not None
    instrument = instrument_of(call.ctx.market, symbol)
    from_id = params.integer("algoId", low=0)
    start = params.integer("startTime", low=0)
    end = params.integer("endTime", low=0)
    limit = params.limit(500, 1000)
    statement = select(ConditionalOrder).where(
        ConditionalOrder.portfolio_id == call.portfolio_id, ConditionalOrder.symbol == symbol
    )
    if from_id is not None:
        statement = statement.where(ConditionalOrder.id >= from_id)
    if start is not None:
        statement = statement.where(ConditionalOrder.created_at >= start)
    if end is not None:
        statement = statement.where(ConditionalOrder.created_at <= end)
    async with call.ctx.db.reader() as session:
        await portfolio_service.get_owned(session, call.principal, call.portfolio_id)
        if from_id is None:
            newest = statement.order_by(ConditionalOrder.id.desc()).limit(limit)
            rows = list(reversed((await session.scalars(newest)).all()))
        else:
            oldest = statement.order_by(ConditionalOrder.id).limit(limit)
            rows = list((await session.scalars(oldest)).all())
        actual = await actual_orders(session, rows)
    return [algo_wire(row, actual.get(row.actual_order_id or 0), instrument) for row in rows]
