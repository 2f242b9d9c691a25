"""Mirroring from the outbox: each fill event of a bound portfolio becomes, per live account, one
`live_orders` row (queued, or skipped with the reason) under a client order id made of the
account and the outbox event, so a second delivery or a retry can never make a second order.
The exchange call is the job `live.send_order`, enqueued after this unit of work commits."""

import json
from collections.abc import Sequence
from decimal import Decimal

from sqlalchemy import select

from papertrade.kit.dbtypes import decimal_sum
from papertrade.live.events import LiveOrderQueued
from papertrade.models import LiveAccount, LiveOrder
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork

FILL_EVENTS = frozenset({"order.filled", "order.partially_filled"})


def client_order_id(account_id: int, event_id: int) -> str:
    return f"pt-{account_id}-{event_id}"  # Binance allows 36 characters of [.A-Z:/a-z0-9_-]


async def mirror(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    session = uow.session
    portfolios = {e.portfolio_id for e in events if e.portfolio_id is not None}
    accounts = (
        await session.scalars(
            select(LiveAccount).where(
                LiveAccount.source_portfolio_id.in_(portfolios), LiveAccount.status == "active"
            )
        )
    ).all()
    if not accounts:
        return
    for event in events:
        for account in accounts:
            if account.source_portfolio_id == event.portfolio_id:
                await _mirror_one(uow, account, event)


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
