"""Who placed an order, in words: the user (None), or a stop, take-profit, trailing stop, the
liquidation engine, copy trading, a strategy or a signal. Order history, fills, the WebSocket's
order events and the inbox say it (docs/web.md), so a position that a stop closed never just
vanishes. Derived, not stored: from the order's `source`, and for an order a conditional order
placed, from that conditional order (its `actual_order_id`)."""

from collections.abc import Iterable, Mapping, MutableMapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.models import ConditionalOrder

BY_SOURCE = {
    "liquidation": "liquidation",
    "copy": "copy trading",
    "strategy": "strategy",
    "webhook": "signal",
}


def by_source(source: str | None) -> str | None:
    """What an order's `source` says about who placed it (None: the user, on any surface)."""
    return BY_SOURCE.get(source or "")


def by_trigger(kind: str, *, reduce_only: bool, close_position: bool) -> str:
    """The words for a conditional order of type `kind` that placed an order."""
    closing = reduce_only or close_position
    if kind.startswith("take_profit"):
        return "take-profit"
    if kind.startswith("trailing"):
        return "trailing stop"
    return "stop-loss" if closing else "stop"


def of_conditional(row: ConditionalOrder | Any) -> str:
    return by_trigger(
        str(row.type), reduce_only=bool(row.reduce_only), close_position=bool(row.close_position)
    )


def annotate(order: MutableMapping[str, Any], placed_by: str, conditional_id: int) -> None:
    """Mark an order as a conditional order's (an event's or a read's data)."""
    order["placed_by"] = placed_by
    order["conditional_id"] = conditional_id


async def of_orders(
    session: AsyncSession, orders: Iterable[Any]
) -> dict[int, tuple[str | None, int | None]]:
    """Who placed each order: order id → (words or None, the conditional order's id)."""
    listed = list(orders)
    found: dict[int, tuple[str | None, int | None]] = {
        o.id: (by_source(o.source), None) for o in listed
    }
    if found:
        rows = await session.scalars(
            select(ConditionalOrder).where(ConditionalOrder.actual_order_id.in_(list(found)))
        )
        for row in rows:
            if row.actual_order_id is not None:
                found[row.actual_order_id] = (of_conditional(row), row.id)
    return found


def placed_fields(
    found: Mapping[int, tuple[str | None, int | None]], order_id: int
) -> dict[str, Any]:
    placed_by, conditional_id = found.get(order_id, (None, None))
    return {"placed_by": placed_by, "conditional_id": conditional_id}
