"""Funding settlement, cross-margin liquidation and isolated liquidation."""

import logging
from collections import defaultdict
from decimal import Decimal

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from papertrade.context import AppContext
from papertrade.kit.decimals import ZERO, plain, usdt6
from papertrade.ledger.events import BalanceChanged, FundingCharged
from papertrade.ledger.service import post
from papertrade.models import FundingSettlement, Order, Portfolio, Position
from papertrade.orders import service as order_service
from papertrade.orders.fills import apply_fill
from papertrade.orders.lifecycle import accept, new_order, transition
from papertrade.positions import service as position_service
from papertrade.trading import funding, margin
from papertrade.trading import orders as rules
from papertrade.trading.enums import (
    Action,
    LedgerKind,
    Liquidity,
    MarginType,
    OrderStatus,
    OrderType,
)
from papertrade.uow import AsyncWork, SyncWork

log = logging.getLogger("papertrade.engine.risk")


async def settle_funding(
    ctx: AppContext, symbol: str, funding_time: int, rate: Decimal, mark: Decimal
) -> int:
    """Charge or pay funding on every open position in `symbol` once; returns positions settled."""
    try:
        async with ctx.transaction() as uow:
            uow.session.add(
                FundingSettlement(
                    symbol=symbol, funding_time=funding_time, funding_rate=rate, mark_price=mark
                )
            )
            await uow.session.flush()
            return await _apply_funding(uow, symbol, funding_time, rate, mark)
    except IntegrityError:
        return 0  # already settled (by this engine before a restart, or by a previous leader)


async def _apply_funding(
    uow: AsyncWork, symbol: str, funding_time: int, rate: Decimal, mark: Decimal
) -> int:
    session = uow.session
    rows = (
        await session.scalars(
            select(Position).where(Position.symbol == symbol, Position.quantity != ZERO)
        )
    ).all()
    ids = sorted({p.portfolio_id for p in rows})
    portfolios = {
        p.id: p
        for p in await session.scalars(
            select(Portfolio).where(Portfolio.id.in_(ids)).order_by(Portfolio.id).with_for_update()
        )
    }
    note = f"funding at {funding_time}, rate {plain(rate)}"
    for position in rows:
        amount = usdt6(funding.funding_payment(position.quantity, mark, rate))  # as booked
        if amount == ZERO:
            continue
        portfolio = portfolios[position.portfolio_id]
        post(uow, portfolio, LedgerKind.FUNDING, amount, symbol=symbol, note=note)
        pid = portfolio.id
        uow.emit(
            FundingCharged(
                portfolio_id=pid, symbol=symbol, amount=amount, funding_time=funding_time, rate=rate
            )
        )
        uow.emit(BalanceChanged(portfolio_id=pid, balance=portfolio.balance))
    return len(rows)


async def liquidate_underwater(ctx: AppContext) -> list[int]:
    """Find portfolios whose cross positions are at or below their maintenance margin, and
    isolated positions at or below theirs, and liquidate them; returns the portfolios' ids."""
    if ctx.market is None or ctx.market.status().get("stale"):
        return []  # never liquidate on a price we do not trust
    async with ctx.db.reader() as session:
        rows = (
            await session.execute(
                select(Position, Portfolio.balance)
                .join(Portfolio, Portfolio.id == Position.portfolio_id)
                .where(Position.quantity != ZERO, Portfolio.deleted_at.is_(None))
            )
        ).all()
    by_portfolio: dict[int, list[Position]] = defaultdict(list)
    balances: dict[int, Decimal] = {}
    for position, balance in rows:
        by_portfolio[position.portfolio_id].append(position)
        balances[position.portfolio_id] = balance
    liquidated = []
    for portfolio_id, positions in by_portfolio.items():
        pairs = position_service.open_pairs(ctx.market, positions)
        state = margin.account_state(balances[portfolio_id], [item for _, item in pairs])
        hit = state.is_liquidatable and await liquidate(ctx, portfolio_id)
        for position, item in pairs:
            if margin.isolated_liquidatable(item):
                hit = await liquidate_isolated(ctx, portfolio_id, position.id) or hit
        if hit:
            liquidated.append(portfolio_id)
    return liquidated


async def liquidate(ctx: AppContext, portfolio_id: int) -> bool:
    """Close every cross position at the mark and cancel resting orders, if still underwater.
    Isolated positions are left alone: they stand on their own margin."""
    async with ctx.transaction() as uow:
        portfolio = await uow.session.scalar(
            select(Portfolio).where(Portfolio.id == portfolio_id).with_for_update()
        )
        if portfolio is None:
            return False
        positions = await position_service.load_positions(uow.session, portfolio_id)
        open_positions = [p for p in positions.values() if p.quantity != ZERO]
        state = margin.account_state(
            portfolio.balance, position_service.position_inputs(ctx.market, open_positions)
        )
        if not state.is_liquidatable:
            return False
        await order_service.cancel_all(uow, portfolio_id)
        cross = [p for p in open_positions if p.margin_type != MarginType.ISOLATED]
        marks = {
            p.symbol: position_service.mark_of(ctx.market, p.symbol, p.entry_price) for p in cross
        }

        def close_all(session: Session) -> None:
            work = uow.on(session)
            for position in cross:
                _close_at_mark(work, portfolio, position, marks[position.symbol])

        await uow.session.run_sync(close_all)
        log.warning(
            "liquidated portfolio %s (cross equity %s <= maintenance %s)",
            portfolio_id,
            state.cross_equity,
            state.cross_maintenance_margin,
        )
        return True


async def liquidate_isolated(ctx: AppContext, portfolio_id: int, position_id: int) -> bool:
    """Close one isolated position at the mark, if its own margin is still used up, and cancel
    the resting orders of that position; the balance and the other positions are not touched
    (its loss is at most its margin: orders/fills.py)."""
    async with ctx.transaction() as uow:
        session = uow.session
        portfolio = await session.scalar(
            select(Portfolio).where(Portfolio.id == portfolio_id).with_for_update()
        )
        position = await session.get(Position, position_id, with_for_update=True)
        if portfolio is None or position is None or position.quantity == ZERO:
            return False
        pairs = position_service.open_pairs(ctx.market, [position])
        if not pairs or not margin.isolated_liquidatable(pairs[0][1]):
            return False
        item = pairs[0][1]
        resting = await session.scalars(
            select(Order)
            .where(
                Order.portfolio_id == portfolio_id,
                Order.symbol == position.symbol,
                Order.position_side == position.position_side,
                Order.is_open.is_(True),
            )
            .with_for_update()
        )
        for order in resting:
            transition(uow, order, OrderStatus.CANCELED, "the isolated position was liquidated")

        def close(sync: Session) -> None:
            _close_at_mark(uow.on(sync), portfolio, position, item.mark)

        await session.run_sync(close)
        log.warning(
            "liquidated the isolated %s %s position of portfolio %s (margin %s)",
            position.symbol,
            position.position_side,
            portfolio_id,
            position.isolated_margin,
        )
        return True


def _close_at_mark(uow: SyncWork, portfolio: Portfolio, position: Position, mark: Decimal) -> None:
    """Close a position with a MARKET order of the engine's, filled at the mark."""
    side = rules.reducing_side(position.quantity)
    assert side is not None
    quantity = abs(position.quantity)
    order = new_order(
        uow,
        portfolio_id=portfolio.id,
        symbol=position.symbol,
        side=side,
        type=OrderType.MARKET,
        action=Action.CLOSE,
        quantity=quantity,
        mark=mark,
        client_order_id=f"liquidation-{uow.now()}-{position.id}",
        source="liquidation",
        position_side=position.position_side,
    )
    accept(uow, order, resting=False)
    apply_fill(
        uow,
        portfolio,
        position,
        order,
        price=mark,
        quantity=quantity,
        liquidity=Liquidity.TAKER,
        is_liquidation=True,
    )
