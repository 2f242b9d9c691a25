"""/v1/conditional-order: place, cancel, query one, list (stops, take-profits, trailing stops)."""

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.conditional import service
from papertrade.conditional.commands import PlaceConditional
from papertrade.conditional.schemas import (
    ConditionalCreate,
    ConditionalPage,
    ConditionalRead,
    PositionTpSl,
    read,
)
from papertrade.kit.ids import Id
from papertrade.orders.pricing import Venue
from papertrade.portfolios import service as portfolio_service
from papertrade.trading.conditional import ConditionalType, WorkingType
from papertrade.trading.enums import PositionSide, Side, TimeInForce
from papertrade.uow import SyncWork

router = APIRouter(tags=["conditional orders"])


def command(body: ConditionalCreate, source: str) -> PlaceConditional:
    return PlaceConditional(
        portfolio_id=body.portfolio_id,
        symbol=body.symbol.upper(),
        side=Side(body.side),
        type=ConditionalType(body.type),
        trigger_price=body.trigger_price,
        price=body.price,
        quantity=body.quantity,
        close_position=body.close_position,
        reduce_only=body.reduce_only,
        working_type=working_type(body.working_price),
        price_protect=body.price_protect,
        callback_rate=body.callback_rate,
        activation_price=body.activation_price,
        time_in_force=TimeInForce(body.time_in_force),
        client_algo_id=body.client_order_id,
        source=source,
    )


@router.post("/conditional-order", status_code=201, response_model=ConditionalRead)
async def place_conditional(
    body: ConditionalCreate, principal: Writer, ctx: Ctx
) -> ConditionalRead:
    """Place a stop, take-profit or trailing stop: it waits for its trigger price, then places
    an order (MARKET, or LIMIT at `price` for stop / take_profit)."""
    venue = Venue.of(ctx)
    cmd = command(body, "web" if principal.kind == "session" else "v1")
    return await ctx.run_unit(lambda uow: read(service.place(uow, venue, principal, cmd)))


@router.get("/conditional-order/{conditional_id}", response_model=ConditionalRead)
async def get_conditional(conditional_id: Id, principal: Caller, ctx: Ctx) -> ConditionalRead:
    """One conditional order of the caller's portfolios."""
    async with ctx.db.reader() as session:
        return read(await service.get_owned(session, principal, conditional_id))


@router.delete("/conditional-order/{conditional_id}", response_model=ConditionalRead)
async def cancel_conditional(conditional_id: Id, principal: Writer, ctx: Ctx) -> ConditionalRead:
    """Cancel a conditional order that has not triggered."""
    async with ctx.transaction() as uow:
        row = await service.get_owned(uow.session, principal, conditional_id, for_update=True)
        return read(await service.cancel(uow, row))


@router.get("/conditional-order", response_model=ConditionalPage)
async def list_conditional(
    principal: Caller,
    ctx: Ctx,
    portfolio_id: Id,
    status: Literal["open", "closed", "all"] = "all",
    symbol: Annotated[str | None, Query(max_length=30)] = None,
    before_id: Id | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
) -> ConditionalPage:
    """A portfolio's conditional orders, newest first, paged with `before_id`."""
    async with ctx.db.reader() as session:
        await portfolio_service.get_owned(session, principal, portfolio_id)
        rows = await service.list_conditional(
            session, portfolio_id, status=status, symbol=symbol, before_id=before_id, limit=limit
        )
    items = [read(row) for row in rows]
    return ConditionalPage(
        conditional_orders=items, next_before_id=items[-1].id if len(items) == limit else None
    )


@router.post(
    "/portfolios/{portfolio_id}/positions/{symbol}/tpsl", response_model=list[ConditionalRead]
)
async def set_position_tpsl(
    portfolio_id: Id,
    symbol: Annotated[str, Path(min_length=1, max_length=30)],
    body: PositionTpSl,
    principal: Writer,
    ctx: Ctx,
) -> list[ConditionalRead]:
    """Set (replace) the take-profit and stop-loss of an open position: market orders that close
    the whole position when the price reaches them; when the position closes, whatever is left
    is cancelled. Send neither to remove them."""
    venue = Venue.of(ctx)
    source = "web" if principal.kind == "session" else "v1"

    def run(uow: SyncWork) -> list[ConditionalRead]:
        rows = service.set_position_tpsl(
            uow,
            venue,
            principal,
            portfolio_id,
            symbol.upper(),
            take_profit=body.take_profit,
            stop_loss=body.stop_loss,
            working_type=working_type(body.working_price),
            source=source,
            position_side=PositionSide(body.position_side) if body.position_side else None,
        )
        return [read(row) for row in rows]

    return await ctx.run_unit(run)


def working_type(name: str) -> WorkingType:
    return WorkingType.MARK_PRICE if name == "mark" else WorkingType.CONTRACT_PRICE
