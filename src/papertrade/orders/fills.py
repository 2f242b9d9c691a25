"""The one function that applies a fill: order, fill row, position, ledger and balance together.

Market orders, resting limits matched by the engine and liquidations all come through here.
"""

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

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
from papertrade.trading import realism
from papertrade.trading.enums import LedgerKind, Liquidity, OrderStatus, Side
from papertrade.trading.realism import PriceSource
from papertrade.uow import AnyWork


def _isolated_moves(
    position: Position, qty_before: Decimal, change: position_math.PositionChange, price: Decimal
) -> tuple[Decimal, Decimal]:
    """(margin released, margin moved in) by a fill of an isolated position: the closed part's
    share of its margin comes back to the balance, the opened part's initial margin at the fill
    price goes in (at 6 decimals, as the ledger books it)."""
    released = ZERO
    if change.closed_qty > ZERO:
        if change.closed_qty >= abs(qty_before):
            released = position.isolated_margin
        else:
            released = usdt6(position.isolated_margin * change.closed_qty / abs(qty_before))
    moved_in = ZERO
    if change.opened_qty > ZERO:
        moved_in = usdt6(change.opened_qty * price / position.leverage)
    return released, moved_in


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
    mark: Decimal | None = None,
    latency_ms: int | None = None,
) -> None:
    """Execute `quantity` of `order` at `price`; every balance change becomes a ledger row.

    The fill row carries its explanation: where the price came from (a taker's price is the
    mark, with its slippage; a maker's is the limit), the mark then (`mark`, default `price`
    for a taker), the slippage over it (bps and USDT, what the trader paid), the commission rate
    and the profile's declared latency (trading/realism.py)."""
    side = Side(order.side)
    qty_before = position.quantity
    change = position_math.apply_fill(qty_before, position.entry_price, side.sign * quantity, price)
    notional = quantity * price
    rate = portfolio.maker_fee_rate if liquidity is Liquidity.MAKER else portfolio.taker_fee_rate
    # At the 6 decimals the ledger books them, so the fill and the order carry the same amounts.
    commission = usdt6(notional * rate)
    # A maker fills at its own limit: no slippage is applied, whatever the mark was then.
    source = PriceSource.LIMIT if liquidity is Liquidity.MAKER else PriceSource.MARK
    slippage_bps, slippage = ZERO, ZERO
    if source is PriceSource.MARK:
        mark = price if mark is None else mark
        slippage_bps = realism.applied_bps(side, mark, price)
        slippage = money(side.sign * (price - mark) * quantity)
    realized = usdt6(change.realized_pnl)
    released = moved_in = ZERO
    if position.margin_type == "isolated":
        released, moved_in = _isolated_moves(position, qty_before, change, price)
        # An isolated position never loses more than its own margin: a loss past it (a gap
        # through the liquidation price) is not the balance's to pay.
        realized = max(realized, -released)

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

    row: dict[str, Any] = {
        "order_id": order.id,
        "portfolio_id": portfolio.id,
        "symbol": order.symbol,
        "side": order.side,
        "position_side": order.position_side,
        "price": price,
        "quantity": quantity,
        "quote_quantity": money(notional),
        "commission": commission,
        "realized_pnl": realized,
        "liquidity": liquidity.value,
        "is_liquidation": is_liquidation,
        "price_source": source.value,
        "mark_price": mark,
        "slippage_bps": slippage_bps,
        "slippage": slippage,
        "fee_rate": rate,
        "latency_ms": latency_ms,
        "created_at": now,
    }
    uow.part(OrderRows).fills.append(row)
    symbol, order_id = order.symbol, order.id
    if released != ZERO:
        note = "margin back from the isolated position"
        position.isolated_margin -= post(
            uow,
            portfolio,
            LedgerKind.ISOLATED_MARGIN,
            released,
            symbol=symbol,
            order_id=order_id,
            note=note,
        )
    if realized != ZERO:
        kind = LedgerKind.LIQUIDATION if is_liquidation else LedgerKind.REALIZED_PNL
        post(uow, portfolio, kind, realized, symbol=symbol, order_id=order_id)
    if commission != ZERO:
        post(uow, portfolio, LedgerKind.COMMISSION, -commission, symbol=symbol, order_id=order_id)
    if moved_in != ZERO:
        note = "margin into the isolated position"
        position.isolated_margin -= post(
            uow,
            portfolio,
            LedgerKind.ISOLATED_MARGIN,
            -moved_in,
            symbol=symbol,
            order_id=order_id,
            note=note,
        )

    status = OrderStatus.FILLED if done else OrderStatus.PARTIALLY_FILLED
    transition(uow, order, status, fill=row)  # the row's id is set when it is inserted
    shown = position_event_data(position, price)
    pid = portfolio.id
    if is_liquidation:
        uow.emit(PositionLiquidated(portfolio_id=pid, position=shown))
    elif change.qty_after == ZERO:
        uow.emit(PositionClosed(portfolio_id=pid, position=shown))
    else:
        uow.emit(PositionChanged(portfolio_id=pid, position=shown))
    uow.emit(BalanceChanged(portfolio_id=pid, balance=portfolio.balance))
