"""The one function that applies a fill: order, fill row, position, ledger and balance together.

Market orders, resting limits matched by the engine and liquidations all come through here.
"""

from decimal import ROUND_HALF_EVEN, Decimal

from papertrade.db import AnySession
from papertrade.events import Event, emit
from papertrade.kit.decimals import STORE_PLACES, ZERO, money, usdt6
from papertrade.kit.time import now_ms
from papertrade.models import Portfolio, Position
from papertrade.orders import pending, workset
from papertrade.orders.record import AnyOrder
from papertrade.orders.views import order_event_data, position_event_data
from papertrade.trading import position as position_math
from papertrade.trading.enums import Liquidity, OrderStatus, Side


def _ledger(
    session: AnySession, portfolio: Portfolio, kind: str, amount: Decimal, order: AnyOrder
) -> None:
    # `amount` is already at 6 decimals (usdt6): the balance moves by exactly what is listed.
    portfolio.balance = portfolio.balance + amount
    pending.of(session).ledger.append(
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
    session: AnySession,
    portfolio: Portfolio,
    position: Position,
    order: AnyOrder,
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
    # Booked at the 6 decimals the ledger lists, here where they are written, so the ledger
    # always adds up to the balance; the fill and the order carry the same amounts.
    commission = usdt6(notional * rate)
    realized = usdt6(change.realized_pnl)

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
    order.status = (OrderStatus.FILLED if done else OrderStatus.PARTIALLY_FILLED).value
    if done:
        workset.release_margin(session, order)
        order.is_open = False
        order.reserved_margin = ZERO
        order.filled_at = now_ms()
    order.updated_at = now_ms()

    pending.of(session).fills.append(
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
