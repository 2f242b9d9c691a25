"""/v1/portfolios/{id}/positions and leverage."""

from fastapi import APIRouter

from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.kit.ids import Id
from papertrade.orders.pricing import Venue
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service
from papertrade.positions.schemas import LeverageRead, LeverageSet, PositionRead
from papertrade.positions.service import PositionView

router = APIRouter(tags=["positions"])


def position_read(view: PositionView) -> PositionRead:
    p = view.position
    return PositionRead(
        symbol=p.symbol,
        side="long" if p.quantity > 0 else "short",
        quantity=p.quantity,
        entry_price=p.entry_price,
        mark_price=view.mark,
        notional_usd=view.notional,
        unrealized_pnl=view.unrealized_pnl,
        realized_pnl=p.realized_pnl,
        leverage=p.leverage,
        margin=view.margin,
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
