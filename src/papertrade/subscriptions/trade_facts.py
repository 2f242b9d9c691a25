"""What a subscription signal adds to a fill so a follower can copy the trade by hand: an open's
take-profits and stop-loss, a close's realised PnL and its percent (docs/subscriptions.md;
the Telegram text is a Cornix block or a close notice, domain rules B2.7)."""

from dataclasses import dataclass
from decimal import Decimal

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.kit.decimals import ZERO
from papertrade.models import ConditionalOrder, Fill, Order, Position
from papertrade.trading.enums import Side


@dataclass(frozen=True, slots=True)
class Exits:
    take_profits: list[Decimal]
    stop_loss: Decimal | None


async def exits_of(
    session: AsyncSession, portfolio_id: int, symbol: str, exit_side: Side, entry_id: int
) -> Exits:
    """The take-profits and the stop-loss of the opened position: those attached to the entry
    (even if they already triggered: the signal may be made late), the reduce-only conditional
    orders waiting on the position, and resting reduce-only limit orders (a signal's `tp`). The
    nearest stop is the one shown."""
    conditionals = await session.execute(
        select(ConditionalOrder.type, ConditionalOrder.trigger_price).where(
            ConditionalOrder.portfolio_id == portfolio_id,
            ConditionalOrder.symbol == symbol,
            ConditionalOrder.side == exit_side.value,
            or_(
                ConditionalOrder.origin_order_id == entry_id,
                ConditionalOrder.is_open.is_(True)
                & (ConditionalOrder.reduce_only.is_(True) | ConditionalOrder.close_position),
            ),
        )
    )
    take_profits: set[Decimal] = set()
    stops: list[Decimal] = []
    for kind, trigger in conditionals:
        if trigger is None:  # a trailing stop before activation has no price to show
            continue
        (take_profits.add if kind.startswith("take_profit") else stops.append)(trigger)
    limits = await session.scalars(
        select(Order.price).where(
            Order.portfolio_id == portfolio_id,
            Order.symbol == symbol,
            Order.side == exit_side.value,
            Order.is_open.is_(True),
            Order.action == "close",
            Order.price.is_not(None),
        )
    )
    take_profits.update(p for p in limits if p is not None)
    long = exit_side is Side.SELL  # a long is closed by selling
    ordered = sorted(take_profits, reverse=not long)  # nearest first
    stop = (max(stops) if long else min(stops)) if stops else None
    return Exits(ordered, stop)


async def margin_type(session: AsyncSession, portfolio_id: int, symbol: str) -> str:
    """Cross or isolated: a symbol's setting (both sides of a hedge-mode position share it)."""
    found = await session.scalar(
        select(Position.margin_type)
        .where(Position.portfolio_id == portfolio_id, Position.symbol == symbol)
        .limit(1)
    )
    return found or "cross"


async def realized_pnl(session: AsyncSession, order_id: int) -> Decimal:
    """What the order's fills realised (the closing part of a flip realises it all)."""
    values = await session.scalars(select(Fill.realized_pnl).where(Fill.order_id == order_id))
    return sum(values, ZERO)
