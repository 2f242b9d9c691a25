"""Mirroring from the outbox: each fill event of a bound source becomes, per live account, one
`live_orders` row (queued, or skipped with the reason) under a client order id made of the
account and the outbox event, so a second delivery or a retry can never make a second order.
The exchange call is the job `live.send_order`, enqueued after this unit of work commits.

A source is a portfolio (all its fills), a strategy (the fills of orders its signals placed, in
whichever portfolio it is deployed) or a webhook token (the fills of orders placed by the alerts
that came in through it). Which signal placed an order is read from the signal tables, written
in the same unit of work as the order, so it is known by the time its fill is delivered. A
stop or take-profit that a signal attached to its entry fires later, on its own: the order it
places is traced back through the conditional order to that entry (`origin_order_id`), so the
live account is closed when the paper position is."""

import json
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.kit.dbtypes import decimal_sum
from papertrade.live.events import LiveOrderQueued
from papertrade.models import (
    ConditionalOrder,
    LiveAccount,
    LiveOrder,
    Order,
    Signal,
    StrategyDeployment,
    StrategySignal,
    WebhookToken,
)
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork

FILL_EVENTS = frozenset({"order.filled", "order.partially_filled"})


def client_order_id(account_id: int, event_id: int) -> str:
    return f"pt-{account_id}-{event_id}"  # Binance allows 36 characters of [.A-Z:/a-z0-9_-]


SIGNAL_WINDOW_MS = 600_000  # an alert's orders are placed within its own unit of work


async def mirror(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    session = uow.session
    portfolios = {e.portfolio_id for e in events if e.portfolio_id is not None}
    if not portfolios:
        return
    strategies = select(StrategyDeployment.strategy_id).where(
        StrategyDeployment.portfolio_id.in_(portfolios)
    )
    tokens = select(WebhookToken.id).where(WebhookToken.portfolio_id.in_(portfolios))
    accounts = (
        await session.scalars(
            select(LiveAccount).where(
                LiveAccount.status == "active",
                or_(
                    LiveAccount.source_portfolio_id.in_(portfolios),
                    LiveAccount.source_strategy_id.in_(strategies),
                    LiveAccount.source_token_id.in_(tokens),
                ),
            )
        )
    ).all()
    if not accounts:
        return
    for event in events:
        for account in accounts:
            if await _from_source(session, account, event):
                await _mirror_one(uow, account, event)


async def _from_source(session: AsyncSession, account: LiveAccount, event: StoredEvent) -> bool:
    """Does this fill come from the account's bound source?"""
    if account.source_portfolio_id is not None:
        return account.source_portfolio_id == event.portfolio_id
    placed = int(event.data["id"])
    if await _placed_by_source(session, account, placed):
        return True
    entry = await session.scalar(  # a triggered TP/SL: the entry it was attached to
        select(ConditionalOrder.origin_order_id).where(ConditionalOrder.actual_order_id == placed)
    )
    return entry is not None and await _placed_by_source(session, account, entry)


async def _placed_by_source(session: AsyncSession, account: LiveAccount, order_id: int) -> bool:
    """Was the order placed by the account's strategy or through its webhook token?"""
    if account.source_strategy_id is not None:
        found = await session.scalar(
            select(StrategySignal.id)
            .where(
                StrategySignal.strategy_id == account.source_strategy_id,
                StrategySignal.order_id == order_id,
            )
            .limit(1)
        )
        return found is not None
    if account.source_token_id is not None:
        order = await session.get(Order, order_id)
        if order is None:
            return False
        rows = await session.scalars(
            select(Signal.order_ids).where(
                Signal.portfolio_id == order.portfolio_id,
                Signal.token_id == account.source_token_id,
                Signal.processed_at >= order.created_at - SIGNAL_WINDOW_MS,
                Signal.processed_at <= order.created_at + SIGNAL_WINDOW_MS,
            )
        )
        return any(order_id in (ids or []) for ids in rows)
    return False


async def _mirror_one(uow: AsyncWork, account: LiveAccount, event: StoredEvent) -> None:
    session, order = uow.session, event.data
    exists = await session.scalar(
        select(LiveOrder.id).where(
            LiveOrder.live_account_id == account.id, LiveOrder.source_event_id == event.id
        )
    )
    if exists is not None:
        return
    already = await session.scalar(
        select(decimal_sum(LiveOrder.source_quantity)).where(
            LiveOrder.live_account_id == account.id,
            LiveOrder.source_order_id == int(order["id"]),
        )
    )
    delta = Decimal(order["filled_quantity"]) - (already or Decimal(0))  # what this event filled
    if delta <= 0:
        return
    allowed = json.loads(account.symbols)
    status, answer = "queued", ""
    if allowed and order["symbol"] not in allowed:
        status, answer = "skipped", f"{order['symbol']} is not in the account's symbol list"
    row = LiveOrder(
        live_account_id=account.id,
        source_event_id=event.id,
        source_order_id=int(order["id"]),
        client_order_id=client_order_id(account.id, event.id),
        symbol=order["symbol"],
        side=order["side"],
        source_quantity=delta,
        source_price=Decimal(order["avg_price"] or order["price"] or 0),
        reduce_only=order.get("action") == "close",
        status=status,
        attempts=0,
        answer=answer,
    )
    session.add(row)
    await session.flush()
    if status == "queued":
        uow.emit(LiveOrderQueued(live_order_id=row.id))


MIRROR = Consumer("live.mirror", mirror, types=FILL_EVENTS, own_tables_only=True)
