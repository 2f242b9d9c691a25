"""/v1/portfolios/square and /v1/portfolios/{code}/public (no sign-in needed)."""

from decimal import Decimal
from typing import Annotated, Literal

from fastapi import APIRouter, Query
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.v1 import Ctx
from papertrade.kit.decimals import ZERO
from papertrade.market.feed import MarketFeed
from papertrade.models import Portfolio
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service as position_service
from papertrade.square import stats
from papertrade.square.schemas import PublicPoint, PublicPortfolio, PublicPosition, SquarePage

router = APIRouter(tags=["square"])
SortKey = Literal["return", "equity", "drawdown", "trades", "win_rate", "created"]


def _public(s: stats.PortfolioStats) -> PublicPortfolio:
    p = s.portfolio
    return PublicPortfolio(
        code=p.code,
        name=p.name,
        description=p.description,
        equity=s.equity,
        initial_balance=p.initial_balance,
        return_pct=s.return_pct.quantize(Decimal("0.0001")),
        max_drawdown_pct=s.max_drawdown_pct.quantize(Decimal("0.0001")),
        period_start=s.period_start,
        trades=s.trades,
        win_rate=s.win_rate.quantize(Decimal("0.0001")) if s.win_rate is not None else None,
        created_at=p.created_at,
    )


def _sort_value(s: stats.PortfolioStats, key: SortKey) -> Decimal:
    values = {
        "return": s.return_pct,
        "equity": s.equity,
        "drawdown": s.max_drawdown_pct,
        "trades": Decimal(s.trades),
        "win_rate": s.win_rate if s.win_rate is not None else Decimal(-1),
        "created": Decimal(s.portfolio.created_at),
    }
    return values[key]


@router.get("/portfolios/square", response_model=SquarePage)
async def square(
    ctx: Ctx,
    sort: SortKey = "return",
    order: Literal["asc", "desc"] = "desc",
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
) -> SquarePage:
    """Public portfolios with equity, return, max drawdown, trades and win rate."""
    async with ctx.db.reader() as session:
        rows = (
            await session.scalars(
                select(Portfolio).where(
                    Portfolio.visibility == "public", Portfolio.deleted_at.is_(None)
                )
            )
        ).all()
        computed = await stats.compute(session, ctx.market, rows)
    computed.sort(key=lambda s: (_sort_value(s, sort), s.portfolio.id), reverse=order == "desc")
    page = computed[offset : offset + limit]
    return SquarePage(
        items=[_public(s) for s in page], total=len(computed), offset=offset, limit=limit
    )


async def public_view(
    session: AsyncSession, market: MarketFeed | None, portfolio: Portfolio
) -> PublicPortfolio:
    """What anyone may see of a public portfolio: its record, not its ids, wallet or fee rates."""
    (computed,) = await stats.compute(session, market, [portfolio])
    return _public(computed)


@router.get("/portfolios/{code}/public", response_model=PublicPortfolio)
async def public_portfolio(code: str, ctx: Ctx) -> PublicPortfolio:
    """One public portfolio by short code; private ones are a 404 here for everyone."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_by_code(session, None, code)
        return await public_view(session, ctx.market, portfolio)


@router.get("/portfolios/{code}/public/equity-curve", response_model=list[PublicPoint])
async def public_equity_curve(
    code: str, ctx: Ctx, limit: Annotated[int, Query(ge=1, le=1000)] = 500
) -> list[PublicPoint]:
    """A public portfolio's equity marks, oldest first, ending with its equity now, each with
    its time-weighted return since the start of its period."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_by_code(session, None, code)
        (now,) = await stats.compute(session, ctx.market, [portfolio])
    marks = [p for p in now.record.points if p.mark is not None][-limit - 1 :]
    return [
        PublicPoint(
            time=p.time,
            equity=p.mark.equity,
            return_pct=p.return_pct.quantize(Decimal("0.0001")),
            period_start=p.period_start,
        )
        for p in marks
        if p.mark is not None
    ]


def roe_pct(pnl: Decimal, quantity: Decimal, entry: Decimal, leverage: int) -> Decimal:
    """Return on equity as exchanges show it: the PnL against the margin the entry took."""
    entry_margin = abs(quantity) * entry / leverage
    return (pnl / entry_margin * 100).quantize(Decimal("0.01")) if entry_margin else ZERO


@router.get("/portfolios/{code}/public/positions", response_model=list[PublicPosition])
async def public_positions(code: str, ctx: Ctx) -> list[PublicPosition]:
    """A public portfolio's open positions at the current marks (no balances, no orders)."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_by_code(session, None, code)
        held = await position_service.load_positions(session, portfolio.id)
    _, views = position_service.account(ctx.market, portfolio, list(held.values()), ZERO)
    return [
        PublicPosition(
            symbol=v.instrument.symbol,
            side="long" if v.position.quantity > ZERO else "short",
            quantity=abs(v.position.quantity),
            entry_price=v.position.entry_price,
            mark_price=v.mark,
            leverage=v.position.leverage,
            unrealized_pnl=v.unrealized_pnl,
            roe_pct=roe_pct(
                v.unrealized_pnl, v.position.quantity, v.position.entry_price, v.position.leverage
            ),
        )
        for v in sorted(views, key=lambda v: v.instrument.symbol)
    ]
