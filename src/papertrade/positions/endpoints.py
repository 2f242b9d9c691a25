"""/v1/portfolios/{id}/positions and leverage."""

from fastapi import APIRouter

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.kit.ids import Id
from papertrade.orders.pricing import Venue
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service
from papertrade.positions.schemas import (
    LeverageRead,
    LeverageSet,
    MarginTypeRead,
    MarginTypeSet,
    PositionMarginChange,
    PositionMarginRead,
    PositionModeRead,
    PositionModeSet,
    PositionRead,
)
from papertrade.positions.service import ADD, REDUCE, PositionView
from papertrade.trading.enums import MarginType

router = APIRouter(tags=["positions"])


def position_read(view: PositionView) -> PositionRead:
    p = view.position
    return PositionRead(
        symbol=p.symbol,
        position_side=p.position_side,
        side="long" if p.quantity > 0 else "short",
        quantity=p.quantity,
        entry_price=p.entry_price,
        mark_price=view.mark,
        notional_usd=view.notional,
        unrealized_pnl=view.unrealized_pnl,
        realized_pnl=p.realized_pnl,
        leverage=p.leverage,
        margin=view.margin,
        margin_type=p.margin_type,
        isolated_margin=p.isolated_margin,
        maintenance_margin=view.maintenance,
        liquidation_price=view.liquidation_price,
        updated_at=p.updated_at,
    )


@router.get("/portfolios/{portfolio_id}/positions", response_model=list[PositionRead])
async def list_positions(portfolio_id: Id, principal: Caller, ctx: Ctx) -> list[PositionRead]:
    """Open positions with live mark, unrealized PnL, margin and liquidation price."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_owned(session, principal, portfolio_id)
        positions = await service.load_positions(session, portfolio_id)
        open_margin = await service.open_order_margin(session, portfolio_id)
    _, views = service.account(ctx.market, portfolio, list(positions.values()), open_margin)
    return [position_read(v) for v in views]


@router.post("/portfolios/{portfolio_id}/leverage", response_model=LeverageRead)
async def set_leverage(
    portfolio_id: Id, body: LeverageSet, principal: Writer, ctx: Ctx
) -> LeverageRead:
    """Set a symbol's leverage (1 up to the instrument's maximum for the current position)."""
    async with ctx.transaction() as uow:
        instrument, max_notional = await service.set_leverage(
            uow.session, Venue.of(ctx), principal, portfolio_id, body.symbol.upper(), body.leverage
        )
    return LeverageRead(symbol=instrument.symbol, leverage=body.leverage, max_notional=max_notional)


@router.put("/portfolios/{portfolio_id}/margin-type", response_model=MarginTypeRead)
async def set_margin_type(
    portfolio_id: Id, body: MarginTypeSet, principal: Writer, ctx: Ctx
) -> MarginTypeRead:
    """Make a symbol cross or isolated (while it has no position and no open order)."""
    async with ctx.transaction() as uow:
        instrument = await service.set_margin_type(
            uow,
            Venue.of(ctx),
            principal,
            portfolio_id,
            body.symbol.upper(),
            MarginType(body.margin_type),
        )
    return MarginTypeRead(symbol=instrument.symbol, margin_type=body.margin_type)


@router.post("/portfolios/{portfolio_id}/positions/margin", response_model=PositionRead)
async def change_position_margin(
    portfolio_id: Id, body: PositionMarginChange, principal: Writer, ctx: Ctx
) -> PositionRead:
    """Add margin to an open isolated position, or take some back (never below its initial
    margin at the mark)."""
    async with ctx.transaction() as uow:
        position = await service.adjust_isolated_margin(
            uow,
            Venue.of(ctx),
            principal,
            portfolio_id,
            body.symbol.upper(),
            body.position_side,
            body.amount,
            ADD if body.action == "add" else REDUCE,
        )
        portfolio = await portfolio_service.get_owned(uow.session, principal, portfolio_id)
        positions = await service.load_positions(uow.session, portfolio_id)
        open_margin = await service.open_order_margin(uow.session, portfolio_id)
    _, views = service.account(ctx.market, portfolio, list(positions.values()), open_margin)
    (view,) = [v for v in views if v.position.id == position.id]
    return position_read(view)


@router.get(
    "/portfolios/{portfolio_id}/positions/margin-history", response_model=list[PositionMarginRead]
)
async def position_margin_history(
    portfolio_id: Id, principal: Caller, ctx: Ctx, symbol: str | None = None, limit: int = 100
) -> list[PositionMarginRead]:
    """The adds and reductions of isolated margin, oldest first."""
    async with ctx.db.reader() as session:
        await portfolio_service.get_owned(session, principal, portfolio_id)
        rows = await service.margin_history(
            session,
            portfolio_id,
            symbol=symbol.upper()[:30] if symbol else None,
            kind=None,
            start_ms=None,
            end_ms=None,
            limit=max(1, min(limit, 1000)),
        )
    return [
        PositionMarginRead(
            symbol=r.symbol,
            position_side=r.position_side,
            type=r.type,
            amount=r.amount,
            created_at=r.created_at,
        )
        for r in rows
    ]


@router.get("/portfolios/{portfolio_id}/position-mode", response_model=PositionModeRead)
async def position_mode(portfolio_id: Id, principal: Caller, ctx: Ctx) -> PositionModeRead:
    """One-way (hedge false) or hedge mode."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_owned(session, principal, portfolio_id)
    return PositionModeRead(hedge=portfolio.dual_side_position)


@router.put("/portfolios/{portfolio_id}/position-mode", response_model=PositionModeRead)
async def set_position_mode(
    portfolio_id: Id, body: PositionModeSet, principal: Writer, ctx: Ctx
) -> PositionModeRead:
    """Switch between one-way and hedge mode (with no position and no open order)."""
    async with ctx.transaction() as uow:
        portfolio = await service.set_position_mode(uow, principal, portfolio_id, body.hedge)
    return PositionModeRead(hedge=portfolio.dual_side_position)
