"""The one function that applies a fill: order, fill row, position, ledger and balance together.

Market orders, resting limits matched by the engine and liquidations all come through here.
"""

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.events import Event, before_commit, emit
from papertrade.kit.decimals import STORE_PLACES, ZERO, money
from papertrade.kit.time import now_ms
from papertrade.models import Fill, LedgerEntry, Order, Portfolio, Position
from papertrade.orders.views import order_event_data, position_event_data
from papertrade.trading import position as position_math
from papertrade.trading.enums import Liquidity, OrderStatus, Side


def _pending(session: AsyncSession) -> dict[str, list[dict[str, Any]]]:
    # Fill and ledger rows are written in bulk when the unit of work ends: one executemany per
    # table instead of one INSERT per row, which is what lets one tick fill thousands of orders.
    pending: dict[str, list[dict[str, Any]]] | None = session.info.get("pending_rows")
    if pending is None:
        pending = session.info["pending_rows"] = {"fills": [], "ledger": []}
        before_commit(session, write_pending_rows)
    return pending


async def write_pending_rows(session: AsyncSession) -> None:
    """Insert the fill and ledger rows queued by apply_fill (called before every commit)."""
    pending = session.info.pop("pending_rows", None)
    if pending is None:
        return
    if pending["fills"]:
        await session.execute(insert(Fill), pending["fills"])
    if pending["ledger"]:
        await session.execute(insert(LedgerEntry), pending["ledger"])


def _ledger(
    session: AsyncSession, portfolio: Portfolio, kind: str, amount: Decimal, order: Order
) -> None:
    portfolio.balance = portfolio.balance + amount
    _pending(session)["ledger"].append(
        {
            "portfolio_id": portfolio.id,
            "kind": kind,
            "amount": amount,
            "balance_after": portfolio.balance,
            "symbol": order.symbol,
            "order_id": order.id,
            "note": "",
            "created_at": now_ms(),
        }
    )


def apply_fill(
    session: AsyncSession,
    portfolio: Portfolio,
    position: Position,
    order: Order,
    *,
    price: Decimal,
    quantity: Decimal,
    liquidity: Liquidity,
    is_liquidation: bool = False,
) -> None:
    """Execute `quantity` of `order` at `price`; every balance change becomes a ledger row."""
    side = Side(order.side)
    change = position_math.apply_fill(
        position.quantity, position.entry_price, side.sign * quantity, price
    )
    notional = quantity * price
    rate = portfolio.maker_fee_rate if liquidity is Liquidity.MAKER else portfolio.taker_fee_rate
    commission = money(notional * rate)
    realized = money(change.realized_pnl)

    position.quantity = change.qty_after
    position.entry_price = change.entry_after
    position.realized_pnl = position.realized_pnl + realized

    order.filled_quantity = order.filled_quantity + quantity
    order.filled_quote = money(order.filled_quote + notional)
    order.avg_price = (order.filled_quote / order.filled_quantity).quantize(
        STORE_PLACES, rounding=ROUND_HALF_EVEN
    )
    order.commission = order.commission + commission
    order.realized_pnl = order.realized_pnl + realized
    done = order.filled_quantity >= order.quantity
    order.status = OrderStatus.FILLED if done else OrderStatus.PARTIALLY_FILLED
    if done:
        order.is_open = False
        order.reserved_margin = ZERO
        order.filled_at = now_ms()
    order.updated_at = now_ms()

    _pending(session)["fills"].append(
        {
            "order_id": order.id,
            "portfolio_id": portfolio.id,
            "symbol": order.symbol,
            "side": order.side,
            "price": price,
            "quantity": quantity,
            "quote_quantity": money(notional),
            "commission": commission,
            "realized_pnl": realized,
            "liquidity": liquidity.value,
            "is_liquidation": is_liquidation,
            "created_at": now_ms(),
        }
    )
    if realized != ZERO:
        _ledger(
            session, portfolio, "liquidation" if is_liquidation else "realized_pnl", realized, order
        )
    if commission != ZERO:
        _ledger(session, portfolio, "commission", -commission, order)

    emit(
        session,
        Event(
            "order.filled" if done else "order.partially_filled",
            portfolio.id,
            order_event_data(order),
        ),
    )
    kind = "position.closed" if change.qty_after == ZERO else "position.changed"
    if is_liquidation:
        kind = "position.liquidated"
    emit(session, Event(kind, portfolio.id, position_event_data(position, price)))
    emit(session, Event("balance.changed", portfolio.id, {"balance": portfolio.balance}))
