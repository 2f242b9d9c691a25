"""Positions and the account state computed from them at current marks."""

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO, to_tick
from papertrade.market.feed import MarketFeed
from papertrade.models import Order, Portfolio, Position
from papertrade.orders.pricing import Venue
from papertrade.portfolios import service as portfolio_service
from papertrade.trading import margin
from papertrade.trading.values import Instrument


async def load_positions(session: AsyncSession, portfolio_id: int) -> dict[str, Position]:
    rows = await session.scalars(select(Position).where(Position.portfolio_id == portfolio_id))
    return {row.symbol: row for row in rows}


async def position_for(
    session: AsyncSession,
    positions: dict[str, Position],
    portfolio_id: int,
    instrument: Instrument,
    default_leverage: int,
) -> Position:
    """The portfolio's row for a symbol, created flat with the default leverage when missing."""
    position = positions.get(instrument.symbol)
    if position is None:
        position = flat_position(portfolio_id, instrument, default_leverage)
        session.add(position)
        positions[instrument.symbol] = position
    return position


def flat_position(portfolio_id: int, instrument: Instrument, default_leverage: int) -> Position:
    """A new, not yet saved, flat position with the default leverage."""
    return Position(
        portfolio_id=portfolio_id,
        symbol=instrument.symbol,
        quantity=ZERO,
        entry_price=ZERO,
        realized_pnl=ZERO,
        leverage=min(default_leverage, instrument.max_leverage),
    )


async def open_order_margin(session: AsyncSession, portfolio_id: int) -> Decimal:
    """Margin reserved by the portfolio's resting orders."""
    total = await session.scalar(
        select(decimal_sum(Order.reserved_margin)).where(
            Order.portfolio_id == portfolio_id, Order.is_open.is_(True)
        )
    )
    return total if total is not None else ZERO


@dataclass(frozen=True, slots=True)
class PositionView:
    """A position with its live figures at the mark."""

    position: Position
    instrument: Instrument
    mark: Decimal
    unrealized_pnl: Decimal
    notional: Decimal
    margin: Decimal
    maintenance: Decimal
    liquidation_price: Decimal | None


def mark_of(feed: MarketFeed | None, symbol: str, fallback: Decimal) -> Decimal:
    quote = feed.quote(symbol) if feed is not None else None
    return quote.mark_price if quote is not None else fallback


def account(
    feed: MarketFeed | None,
    portfolio: Portfolio,
    positions: Sequence[Position],
    open_margin: Decimal,
) -> tuple[margin.AccountState, list[PositionView]]:
    """The cross-margin summary and each open position's live view."""
    inputs = position_inputs(feed, positions)
    state = margin.account_state(portfolio.balance, inputs, open_margin)
    liquidation = margin.liquidation_prices(portfolio.balance, inputs)
    views = []
    by_symbol = {p.symbol: p for p in positions}
    for item, price in zip(inputs, liquidation, strict=True):
        size = abs(item.qty) * item.mark
        if price is not None:
            price = shown_liquidation_price(price, item.qty, item.instrument.tick_size)
        views.append(
            PositionView(
                position=by_symbol[item.instrument.symbol],
                instrument=item.instrument,
                mark=item.mark,
                unrealized_pnl=item.qty * (item.mark - item.entry),
                notional=item.qty * item.mark,
                margin=margin.initial_margin(size, item.leverage),
                maintenance=margin.maintenance_margin(item.instrument, size),
                liquidation_price=price,
            )
        )
    return state, views


def shown_liquidation_price(price: Decimal, qty: Decimal, tick: Decimal) -> Decimal:
    """The liquidation price on the tick grid, rounded toward the mark: up for a long, down for a
    short, so the price people watch is reached no later than the real one."""
    return to_tick(price, tick, ROUND_CEILING if qty > ZERO else ROUND_FLOOR)


def position_inputs(
    feed: MarketFeed | None, positions: Sequence[Position]
) -> list[margin.PositionInput]:
    instruments = feed.instruments() if feed is not None else {}
    return [
        margin.PositionInput(
            instruments[p.symbol],
            p.quantity,
            p.entry_price,
            mark_of(feed, p.symbol, p.entry_price),
            p.leverage,
        )
        for p in positions
        if p.quantity != ZERO and p.symbol in instruments
    ]


async def set_leverage(
    session: AsyncSession,
    venue: Venue,
    principal: Principal,
    portfolio_id: int,
    symbol: str,
    leverage: int,
) -> tuple[Instrument, Decimal]:
    """Set a symbol's leverage; returns the instrument and the largest notional it allows."""
    instrument = venue.instrument(symbol)
    await portfolio_service.get_owned(session, principal, portfolio_id, for_update=True)
    positions = await load_positions(session, portfolio_id)
    position = await position_for(
        session, positions, portfolio_id, instrument, venue.default_leverage
    )
    change_leverage(
        position,
        instrument,
        leverage,
        mark_of(venue.market, instrument.symbol, position.entry_price),
    )
    return instrument, Decimal(margin.max_notional_for_leverage(instrument, leverage))


def change_leverage(
    position: Position, instrument: Instrument, leverage: int, mark: Decimal
) -> None:
    """Set the leverage of a (loaded) position, if its size at `mark` allows it."""
    margin.check_leverage(instrument, leverage, abs(position.quantity) * mark)
    position.leverage = leverage
