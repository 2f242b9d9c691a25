"""/v1/order: place, cancel, query one, list."""

from dataclasses import replace
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.conditional import service as conditional_service
from papertrade.conditional.schemas import read as conditional_read
from papertrade.kit.ids import Id
from papertrade.kit.responses import NativeJSONResponse
from papertrade.orders import origin, service
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.preview import preview
from papertrade.orders.pricing import Venue
from papertrade.orders.schemas import (
    OrderCreate,
    OrderPage,
    OrderPlaced,
    OrderPreviewInput,
    OrderPreviewRead,
    OrderRead,
)
from papertrade.orders.writer import OrderWriter, order_writer
from papertrade.portfolios import service as portfolio_service
from papertrade.trading.conditional import WorkingType
from papertrade.trading.enums import Action, OrderType, PositionSide, Side, TimeInForce

router = APIRouter(tags=["orders"])


def _read(order: object, found: dict[int, tuple[str | None, int | None]]) -> OrderRead:
    """An order as /v1 shows it, with who placed it (orders/origin.py)."""
    read = OrderRead.model_validate(order)
    return read.model_copy(update=origin.placed_fields(found, read.id))


@router.post("/order", status_code=201, response_model=OrderPlaced)
async def place_order(
    body: OrderCreate,
    principal: Writer,
    ctx: Ctx,
    orders: Annotated[OrderWriter, Depends(order_writer)],
) -> NativeJSONResponse:
    """Place an order. MARKET fills at once at the mark; LIMIT rests until the mark crosses it.
    `take_profit` / `stop_loss` attach market orders that close the position at those marks."""
    source = "web" if principal.kind == "session" else "v1"
    command = PlaceOrder(
        portfolio_id=body.portfolio_id,
        symbol=body.symbol.upper(),
        side=Side(body.side) if body.side else None,
        type=OrderType(body.type),
        action=Action(body.action),
        quantity=body.quantity,
        size_usd=body.size_usd,
        price=body.price,
        time_in_force=TimeInForce(body.time_in_force),
        client_order_id=body.client_order_id,
        source=source,
        position_side=PositionSide(body.position_side) if body.position_side else None,
    )
    exits = []
    if body.side and (body.take_profit or body.stop_loss):
        exits = conditional_service.attached(
            body.portfolio_id,
            command.symbol,
            Side(body.side).opposite,
            take_profit=body.take_profit,
            stop_loss=body.stop_loss,
            working_type=WorkingType.MARK_PRICE,
            source=source,
        )
        conditional_service.check_attached(Venue.of(ctx), exits)  # before the entry is placed
    order = OrderPlaced.model_validate(await orders.place(principal, command))
    if exits and order.status in ("new", "partially_filled", "filled"):
        venue = Venue.of(ctx)
        order.attached = await ctx.run_unit(
            lambda uow: [
                conditional_read(
                    conditional_service.place(
                        uow, venue, principal, replace(cmd, origin_order_id=order.id)
                    )
                )
                for cmd in exits
            ]
        )
    # Rendered here: FastAPI would validate the model a second time against response_model.
    return NativeJSONResponse(order.model_dump(mode="json"), status_code=201)


@router.post("/order/preview", response_model=OrderPreviewRead)
async def preview_order(body: OrderPreviewInput, principal: Caller, ctx: Ctx) -> OrderPreviewRead:
    """What an order would do, without placing it: the quantity after step rounding, notional,
    margin, fee, the position's estimated liquidation price, the minimum order and, in plain
    words, why it would be refused. Computed by the same rules that fill orders."""
    command = PlaceOrder(
        portfolio_id=body.portfolio_id,
        symbol=body.symbol.upper(),
        side=Side(body.side) if body.side else None,
        type=OrderType(body.type),
        action=Action(body.action),
        quantity=body.quantity,
        size_usd=body.size_usd,
        price=body.price,
        source="preview",
    )
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_owned(session, principal, body.portfolio_id)
        seen = await preview(session, Venue.of(ctx), portfolio, command)
    return OrderPreviewRead(
        symbol=seen.symbol,
        side=seen.side.value if seen.side else None,
        quantity=seen.quantity,
        price=seen.price,
        notional=seen.notional,
        leverage=seen.leverage,
        initial_margin=seen.initial_margin,
        fee_rate=seen.fee_rate,
        fee=seen.fee,
        liquidity=seen.liquidity.value,
        available=seen.available,
        liquidation_price=seen.liquidation_price,
        min_quantity=seen.min_quantity,
        min_notional=seen.min_notional,
        minimum=seen.minimum_text,
        problems=seen.problems,
    )


@router.get("/order/{order_id}", response_model=OrderRead)
async def get_order(order_id: Id, principal: Caller, ctx: Ctx) -> OrderRead:
    """One order of the caller's portfolios."""
    async with ctx.db.reader() as session:
        order, _ = await service.get_owned_order(session, principal, order_id)
        found = await origin.of_orders(session, [order])
        return _read(order, found)


@router.delete("/order/{order_id}", response_model=OrderRead)
async def cancel_order(order_id: Id, principal: Writer, ctx: Ctx) -> OrderRead:
    """Cancel a resting order."""
    async with ctx.transaction() as uow:
        order, _ = await service.get_owned_order(uow.session, principal, order_id, for_update=True)
        return OrderRead.model_validate(await service.cancel(uow, order))


@router.get("/order", response_model=OrderPage)
async def list_orders(
    principal: Caller,
    ctx: Ctx,
    portfolio_id: Id,
    status: Literal["open", "closed", "all"] = "all",
    symbol: Annotated[str | None, Query(max_length=30)] = None,
    before_id: Id | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> OrderPage:
    """A portfolio's orders, newest first, paged with `before_id`."""
    async with ctx.db.reader() as session:
        await portfolio_service.get_owned(session, principal, portfolio_id)
        orders = await service.list_orders(
            session, portfolio_id, status=status, symbol=symbol, before_id=before_id, limit=limit
        )
        found = await origin.of_orders(session, orders)
    rows = [_read(o, found) for o in orders]
    return OrderPage(orders=rows, next_before_id=rows[-1].id if len(rows) == limit else None)
