"""/v1/portfolios/{id}/equity, ledger, fills, reset and top-up."""

from decimal import Decimal
from typing import Annotated

from fastapi import APIRouter, Query

from papertrade.accounts import returns, service
from papertrade.accounts.schemas import (
    EquityRead,
    FillRead,
    LedgerRead,
    Reset,
    SnapshotRead,
    TopUp,
)
from papertrade.auth.v1 import Caller, Ctx, Writer
from papertrade.kit.ids import Id
from papertrade.kit.time import now_ms
from papertrade.portfolios import service as portfolio_service
from papertrade.portfolios.schemas import PortfolioRead
from papertrade.tiers import limits as tier_limits

router = APIRouter(tags=["accounts"])
Limit = Annotated[int, Query(ge=1, le=1000)]
PCT = Decimal("0.0001")


@router.get("/portfolios/{portfolio_id}/equity", response_model=EquityRead)
async def equity(portfolio_id: Id, principal: Caller, ctx: Ctx) -> EquityRead:
    """Balance, unrealized PnL, equity, margin used and available, at the current marks, and the
    time-weighted return and drawdown of the current period."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_owned(session, principal, portfolio_id)
        state = await service.account_state(session, ctx.market, portfolio)
        from_ledger = await service.ledger_balance(session, portfolio_id)
        time = now_ms()
        now = returns.now_mark(time, state.equity, portfolio.balance)
        record = (await returns.records(session, [portfolio], {portfolio.id: now}))[portfolio.id]
    return EquityRead(
        portfolio_id=portfolio_id,
        balance=state.cross_wallet_balance,
        isolated_margin=state.wallet_balance - state.cross_wallet_balance,
        unrealized_pnl=state.unrealized_pnl,
        equity=state.equity,
        margin_used=state.position_initial_margin + state.open_order_margin,
        maintenance_margin=state.maintenance_margin,
        available=state.available_balance,
        ledger_balance=from_ledger,
        return_pct=record.return_pct.quantize(PCT),
        max_drawdown_pct=record.max_drawdown_pct.quantize(PCT),
        period_start=record.period_start,
        time=time,
    )


@router.get("/portfolios/{portfolio_id}/ledger", response_model=list[LedgerRead])
async def ledger(
    portfolio_id: Id, principal: Caller, ctx: Ctx, before_id: Id | None = None, limit: Limit = 100
) -> list[LedgerRead]:
    """Every balance change, newest first (page with before_id)."""
    async with ctx.db.reader() as session:
        await portfolio_service.get_owned(session, principal, portfolio_id)
        rows = await service.ledger(session, portfolio_id, before_id, limit)
        return [LedgerRead.model_validate(r) for r in rows]


@router.get("/portfolios/{portfolio_id}/fills", response_model=list[FillRead])
async def fills(
    portfolio_id: Id,
    principal: Caller,
    ctx: Ctx,
    symbol: Annotated[str | None, Query(max_length=30)] = None,
    before_id: Id | None = None,
    limit: Limit = 100,
) -> list[FillRead]:
    """Executions with price, commission and realized PnL, newest first."""
    async with ctx.db.reader() as session:
        await portfolio_service.get_owned(session, principal, portfolio_id)
        rows = await service.fills(
            session, portfolio_id, symbol=symbol, before_id=before_id, limit=limit
        )
        return [FillRead.model_validate(r) for r in rows]


@router.get("/portfolios/{portfolio_id}/equity-curve", response_model=list[SnapshotRead])
async def equity_curve(
    portfolio_id: Id, principal: Caller, ctx: Ctx, limit: Limit = 500
) -> list[SnapshotRead]:
    """Periodic equity marks, oldest first, each with its time-weighted return since the start
    of its period."""
    async with ctx.db.reader() as session:
        portfolio = await portfolio_service.get_owned(session, principal, portfolio_id)
        record = (await returns.records(session, [portfolio], None))[portfolio.id]
    return [
        SnapshotRead(
            time=p.time,
            balance=p.mark.balance,
            equity=p.mark.equity,
            return_pct=p.return_pct.quantize(PCT),
            period_start=p.period_start,
        )
        for p in [p for p in record.points if p.mark is not None][-limit:]
        if p.mark is not None
    ]


@router.post("/portfolios/{portfolio_id}/top-up", response_model=PortfolioRead)
async def top_up(portfolio_id: Id, body: TopUp, principal: Writer, ctx: Ctx) -> PortfolioRead:
    """Add simulated USDT (a ledger `top_up` entry)."""
    async with ctx.transaction() as uow:
        portfolio = await portfolio_service.get_owned(
            uow.session, principal, portfolio_id, for_update=True
        )
        if ctx.settings.tiers_enforced:  # over the tier after a downgrade: read-only
            await tier_limits.check_portfolio_writable(uow.session, portfolio.id, uow.now())
        await returns.mark_before_flow(uow, ctx.market, portfolio)
        service.top_up(uow, portfolio, body.amount)
        return PortfolioRead.model_validate(portfolio)


@router.post("/portfolios/{portfolio_id}/reset", response_model=PortfolioRead)
async def reset(
    portfolio_id: Id, principal: Writer, ctx: Ctx, body: Reset | None = None
) -> PortfolioRead:
    """Cancel orders, close positions without PnL, restore the starting balance; keys stay."""
    async with ctx.transaction() as uow:
        portfolio = await portfolio_service.get_owned(
            uow.session, principal, portfolio_id, for_update=True
        )
        await returns.mark_before_flow(uow, ctx.market, portfolio)  # the old period's end
        await service.reset(uow, portfolio, body.initial_balance if body else None)
        return PortfolioRead.model_validate(portfolio)
