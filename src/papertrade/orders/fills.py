"""The one function that applies a fill: order, fill row, position, ledger and balance together.

Market orders, resting limits matched by the engine and liquidations all come through here.
"""

from decimal import ROUND_HALF_EVEN, Decimal

from papertrade.kit.decimals import STORE_PLACES, ZERO, money, usdt6
from papertrade.ledger.events import BalanceChanged
from papertrade.ledger.service import post
from papertrade.models import Portfolio, Position
from papertrade.orders.lifecycle import transition
from papertrade.orders.pending import OrderRows
from papertrade.orders.record import AnyOrder
from papertrade.orders.views import position_event_data
from papertrade.positions.events import PositionChanged, PositionClosed, PositionLiquidated
from papertrade.trading import position as position_math
from papertrade.trading.enums import LedgerKind, Liquidity, OrderStatus, Side
from papertrade.uow import AnyWork


def apply_fill(
    uow: AnyWork,
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
    # At the 6 decimals the ledger books them, so the fill and the order carry the same amounts.
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
    now = uow.now()
    if done:
        order.filled_at = now

    uow.part(OrderRows).fills.append(
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
            "created_at": now,
        }
    )
    symbol, order_id = order.symbol, order.id
    if realized != ZERO:
        kind = LedgerKind.LIQUIDATION if is_liquidation else LedgerKind.REALIZED_PNL
        post(uow, portfolio, kind, realized, symbol=symbol, order_id=order_id)
    if commission != ZERO:
        post(uow, portfolio, LedgerKind.COMMISSION, -commission, symbol=symbol, order_id=order_id)

    transition(uow, order, OrderStatus.FILLED if done else OrderStatus.PARTIALLY_FILLED)
    shown = position_event_data(position, price)
    pid = portfolio.id
    if is_liquidation:
        uow.emit(PositionLiquidated(portfolio_id=pid, position=shown))
    elif change.qty_after == ZERO:
        uow.emit(PositionClosed(portfolio_id=pid, position=shown))
    else:
        uow.emit(PositionChanged(portfolio_id=pid, position=shown))
    uow.emit(BalanceChanged(portfolio_id=pid, balance=portfolio.balance))
