"""Read-only history queries with Binance's paging rules (ids, time windows, ascending order).

The domain services page newest-first with `before_id`; Binance pages forward from an id or a
time, so these selects live with the adapter. They read; they never decide anything.

Binance ids are 64-bit and clients send any of them; ours stop at `ID_MAX` (32-bit columns on
PostgreSQL). An id past it names no row, so it is answered here without reaching the driver.
"""

from collections.abc import Sequence
from typing import Any, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from papertrade.kit.ids import ID_MAX
from papertrade.kit.time import now_ms
from papertrade.models import Fill, LedgerEntry, Order

T = TypeVar("T", Order, Fill, LedgerEntry)
WEEK_MS = 7 * 86_400_000


async def _window(
    session: AsyncSession,
    statement: Select[T],
    id_column: InstrumentedAttribute[int],
    time_column: InstrumentedAttribute[int],
    *,
    from_id: int | None,
    start_ms: int | None,
    end_ms: int | None,
    limit: int,
    default_days: int | None = None,
) -> list[T]:
    """From `from_id` upwards, else from `start_ms` upwards, else the newest up to `end_ms`."""
    if from_id is not None:
        if from_id > ID_MAX:  # no row at or past it
            return []
        statement = statement.where(id_column >= from_id).order_by(id_column).limit(limit)
        return list((await session.scalars(statement)).all())
    if end_ms is not None:
        statement = statement.where(time_column <= end_ms)
    if start_ms is not None:
        statement = statement.where(time_column >= start_ms).order_by(id_column).limit(limit)
        return list((await session.scalars(statement)).all())
    if default_days is not None and end_ms is None:
        statement = statement.where(time_column >= now_ms() - default_days * 86_400_000)
    newest = await session.scalars(statement.order_by(id_column.desc()).limit(limit))
    return list(reversed(newest.all()))


async def orders_window(
    session: AsyncSession,
    portfolio_id: int,
    symbol: str | None,
    *,
    from_id: int | None,
    start_ms: int | None,
    end_ms: int | None,
    limit: int,
    source: str | None = None,
    default_days: int | None = None,
) -> list[Order]:
    """Orders, ascending: GET /fapi/v1/allOrders (one symbol's), and GET /fapi/v1/forceOrders
    (`source="liquidation"`, every symbol or one, the last 7 days by default)."""
    statement = select(Order).where(Order.portfolio_id == portfolio_id)
    if symbol is not None:
        statement = statement.where(Order.symbol == symbol)
    if source is not None:
        statement = statement.where(Order.source == source)
    return await _window(
        session,
        statement,
        Order.id,
        Order.created_at,
        from_id=from_id,
        start_ms=start_ms,
        end_ms=end_ms,
        limit=limit,
        default_days=default_days,
    )


async def fills_window(
    session: AsyncSession,
    portfolio_id: int,
    symbol: str,
    *,
    order_id: int | None,
    from_id: int | None,
    start_ms: int | None,
    end_ms: int | None,
    limit: int,
) -> list[Fill]:
    """GET /fapi/v1/userTrades: one symbol's fills, ascending; the last 7 days by default."""
    statement = select(Fill).where(Fill.portfolio_id == portfolio_id, Fill.symbol == symbol)
    if order_id is not None:
        if order_id > ID_MAX:  # no such order, so no fills
            return []
        statement = statement.where(Fill.order_id == order_id)
    return await _window(
        session,
        statement,
        Fill.id,
        Fill.created_at,
        from_id=from_id,
        start_ms=start_ms,
        end_ms=end_ms,
        limit=limit,
        default_days=None if order_id is not None else 7,
    )


async def ledger_window(
    session: AsyncSession,
    portfolio_id: int,
    *,
    symbol: str | None,
    kinds: Sequence[str] | None,
    start_ms: int | None,
    end_ms: int | None,
    offset: int,
    limit: int,
) -> Sequence[LedgerEntry]:
    """GET /fapi/v1/income: ledger entries ascending; the last 7 days unless a time is given."""
    statement: Select[Any] = select(LedgerEntry).where(LedgerEntry.portfolio_id == portfolio_id)
    if symbol is not None:
        statement = statement.where(LedgerEntry.symbol == symbol)
    if kinds is not None:
        statement = statement.where(LedgerEntry.kind.in_(list(kinds)))
    else:
        # Margin moved into or out of an isolated position is no income (Binance lists none).
        statement = statement.where(LedgerEntry.kind != "isolated_margin")
    if start_ms is None and end_ms is None:
        start_ms = now_ms() - WEEK_MS
    if start_ms is not None:
        statement = statement.where(LedgerEntry.created_at >= start_ms)
    if end_ms is not None:
        statement = statement.where(LedgerEntry.created_at <= end_ms)
    statement = statement.order_by(LedgerEntry.id).offset(offset).limit(limit)
    return (await session.scalars(statement)).all()
