"""Positions and the account state computed from them at current marks; a symbol's settings
(leverage, margin type), isolated margin moved in and out, and the portfolio's position mode."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.principal import Principal
from papertrade.kit.dbtypes import decimal_sum
from papertrade.kit.decimals import ZERO, money_text, to_tick
from papertrade.ledger.events import BalanceChanged
from papertrade.ledger.service import post
from papertrade.market.feed import MarketFeed
from papertrade.models import ConditionalOrder, Order, Portfolio, Position, PositionMarginChange
from papertrade.orders.pricing import Venue
from papertrade.orders.views import position_event_data
from papertrade.portfolios import service as portfolio_service
from papertrade.positions.events import PositionChanged
from papertrade.trading import margin
from papertrade.trading.enums import LedgerKind, MarginType, PositionSide
from papertrade.trading.errors import (
    CrossBalanceInsufficient,
    IsolatedBalanceInsufficient,
    IsolatedLeverageReduction,
    MarginTypeOpenOrders,
    MarginTypePosition,
    MarginTypeUnchanged,
    NotIsolated,
    PositionModeOpenOrders,
    PositionModePosition,
    PositionModeUnchanged,
    PositionSideMismatch,
)
from papertrade.trading.values import Instrument
from papertrade.uow import AsyncWork

ADD, REDUCE = 1, 2  # Binance's positionMargin types


def position_key(symbol: str, position_side: str) -> str:
    """How a portfolio's positions are keyed in memory: the symbol for the one-way BOTH row (so
    the one-way order path looks a position up exactly as before), symbol:SIDE in hedge mode."""
    return symbol if position_side == PositionSide.BOTH else f"{symbol}:{position_side}"


def key_of(position: Position) -> str:
    return position_key(position.symbol, position.position_side)


def mode_sides(dual_side_position: bool) -> tuple[PositionSide, ...]:
    """The position sides a portfolio's mode trades."""
    return (PositionSide.LONG, PositionSide.SHORT) if dual_side_position else (PositionSide.BOTH,)


async def load_positions(session: AsyncSession, portfolio_id: int) -> dict[str, Position]:
    rows = await session.scalars(select(Position).where(Position.portfolio_id == portfolio_id))
    return {key_of(row): row for row in rows}


def sibling(positions: Mapping[str, Position], symbol: str) -> Position | None:
    """Any row of the symbol: the symbol's leverage and margin type live on each of its rows."""
    for row in positions.values():
        if row.symbol == symbol:
            return row
    return None


async def position_for(
    session: AsyncSession,
    positions: dict[str, Position],
    portfolio_id: int,
    instrument: Instrument,
    default_leverage: int,
    position_side: str = PositionSide.BOTH,
) -> Position:
    """The portfolio's row for a symbol and side, created flat when missing (with the symbol's
    settings, or the default leverage and cross margin)."""
    key = position_key(instrument.symbol, position_side)
    position = positions.get(key)
    if position is None:
        position = flat_position(
            portfolio_id,
            instrument,
            default_leverage,
            position_side,
            like=sibling(positions, instrument.symbol),
        )
        session.add(position)
        positions[key] = position
    return position


def flat_position(
    portfolio_id: int,
    instrument: Instrument,
    default_leverage: int,
    position_side: str = PositionSide.BOTH,
    *,
    like: Position | None = None,
) -> Position:
    """A new, not yet saved, flat position: the settings of `like` (another row of the symbol),
    else the default leverage and cross margin."""
    return Position(
        portfolio_id=portfolio_id,
        symbol=instrument.symbol,
        position_side=str(position_side),
        quantity=ZERO,
        entry_price=ZERO,
        realized_pnl=ZERO,
        leverage=like.leverage if like else min(default_leverage, instrument.max_leverage),
        margin_type=like.margin_type if like else MarginType.CROSS.value,
        isolated_margin=ZERO,
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

    @property
    def isolated(self) -> bool:
        return self.position.margin_type == MarginType.ISOLATED


def mark_of(feed: MarketFeed | None, symbol: str, fallback: Decimal) -> Decimal:
    quote = feed.quote(symbol) if feed is not None else None
    return quote.mark_price if quote is not None else fallback


def account(
    feed: MarketFeed | None,
    portfolio: Portfolio,
    positions: Sequence[Position],
    open_margin: Decimal,
) -> tuple[margin.AccountState, list[PositionView]]:
    """The account summary and each open position's live view (`portfolio.balance` is the cross
    wallet: an isolated position's margin has left it)."""
    pairs = open_pairs(feed, positions)
    inputs = [item for _, item in pairs]
    state = margin.account_state(portfolio.balance, inputs, open_margin)
    liquidation = margin.liquidation_prices(portfolio.balance, inputs)
    views = []
    for (position, item), price in zip(pairs, liquidation, strict=True):
        size = abs(item.qty) * item.mark
        if price is not None:
            price = shown_liquidation_price(price, item.qty, item.instrument.tick_size)
        views.append(
            PositionView(
                position=position,
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


def position_input(instrument: Instrument, p: Position, mark: Decimal) -> margin.PositionInput:
    isolated = p.isolated_margin if p.margin_type == MarginType.ISOLATED else None
    return margin.PositionInput(instrument, p.quantity, p.entry_price, mark, p.leverage, isolated)


def open_pairs(
    feed: MarketFeed | None, positions: Sequence[Position]
) -> list[tuple[Position, margin.PositionInput]]:
    instruments = feed.instruments() if feed is not None else {}
    return [
        (p, position_input(instruments[p.symbol], p, mark_of(feed, p.symbol, p.entry_price)))
        for p in positions
        if p.quantity != ZERO and p.symbol in instruments
    ]


def position_inputs(
    feed: MarketFeed | None, positions: Sequence[Position]
) -> list[margin.PositionInput]:
    return [item for _, item in open_pairs(feed, positions)]


async def _symbol_rows(
    session: AsyncSession, portfolio: Portfolio, instrument: Instrument, default_leverage: int
) -> list[Position]:
    """Every row of a symbol, with the rows of the portfolio's mode made when missing."""
    positions = await load_positions(session, portfolio.id)
    for side in mode_sides(portfolio.dual_side_position):
        await position_for(session, positions, portfolio.id, instrument, default_leverage, side)
    return [p for p in positions.values() if p.symbol == instrument.symbol]


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
    portfolio = await portfolio_service.get_owned(session, principal, portfolio_id, for_update=True)
    rows = await _symbol_rows(session, portfolio, instrument, venue.default_leverage)
    for position in rows:
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
    if (
        position.margin_type == MarginType.ISOLATED
        and position.quantity != ZERO
        and leverage < position.leverage
    ):
        # Its margin is what was moved in; a lower leverage would need more (as on Binance).
        raise IsolatedLeverageReduction(
            f"{position.symbol} is isolated with an open position: its leverage can rise, not "
            f"fall (add margin instead)."
        )
    position.leverage = leverage


async def _open_order_count(session: AsyncSession, portfolio_id: int, symbol: str | None) -> int:
    """Resting orders and waiting conditional orders (of one symbol, or all)."""
    total = 0
    for model in (Order, ConditionalOrder):
        statement = select(func.count()).where(
            model.portfolio_id == portfolio_id, model.is_open.is_(True)
        )
        if symbol is not None:
            statement = statement.where(model.symbol == symbol)
        total += await session.scalar(statement) or 0
    return total


async def set_margin_type(
    uow: AsyncWork,
    venue: Venue,
    principal: Principal,
    portfolio_id: int,
    symbol: str,
    margin_type: MarginType,
) -> Instrument:
    """Make a symbol cross or isolated. Only while it has no position and no open order."""
    session = uow.session
    instrument = venue.instrument(symbol)
    portfolio = await portfolio_service.get_owned(session, principal, portfolio_id, for_update=True)
    rows = await _symbol_rows(session, portfolio, instrument, venue.default_leverage)
    if all(row.margin_type == margin_type for row in rows):
        raise MarginTypeUnchanged("No need to change margin type.")
    if any(row.quantity != ZERO for row in rows):
        raise MarginTypePosition(
            f"{instrument.symbol} has an open position; close it to change its margin type."
        )
    if await _open_order_count(session, portfolio_id, instrument.symbol):
        raise MarginTypeOpenOrders(
            f"{instrument.symbol} has open orders; cancel them to change its margin type."
        )
    for row in rows:
        row.margin_type = margin_type.value
    return instrument


async def set_position_mode(
    uow: AsyncWork, principal: Principal, portfolio_id: int, dual_side_position: bool
) -> Portfolio:
    """Switch between one-way mode and hedge mode (dualSidePosition). Only with no position and
    no open order anywhere in the portfolio."""
    session = uow.session
    portfolio = await portfolio_service.get_owned(session, principal, portfolio_id, for_update=True)
    if portfolio.dual_side_position == dual_side_position:
        raise PositionModeUnchanged("No need to change position side.")
    held = await session.scalar(
        select(func.count()).where(Position.portfolio_id == portfolio_id, Position.quantity != ZERO)
    )
    if held:
        raise PositionModePosition("Close every position to change the position mode.")
    if await _open_order_count(session, portfolio_id, None):
        raise PositionModeOpenOrders("Cancel every open order to change the position mode.")
    portfolio.dual_side_position = dual_side_position
    return portfolio


def resolve_side(portfolio: Portfolio, position_side: str | None) -> PositionSide:
    """The position side a margin change names: BOTH in one-way mode, LONG or SHORT in hedge."""
    if portfolio.dual_side_position:
        if position_side in (PositionSide.LONG, PositionSide.SHORT):
            return PositionSide(position_side)
        raise PositionSideMismatch(
            "The portfolio is in hedge mode: name the position side, LONG or SHORT."
        )
    if position_side not in (None, PositionSide.BOTH):
        raise PositionSideMismatch("The portfolio is in one-way mode: the position side is BOTH.")
    return PositionSide.BOTH


async def adjust_isolated_margin(
    uow: AsyncWork,
    venue: Venue,
    principal: Principal,
    portfolio_id: int,
    symbol: str,
    position_side: str | None,
    amount: Decimal,
    kind: int,
) -> Position:
    """Move `amount` USDT into (ADD) or out of (REDUCE) an open isolated position, booked on the
    ledger (isolated_margin). A reduction never leaves the position less than its initial
    margin at the mark (an unrealized loss counted against it)."""
    session = uow.session
    instrument = venue.instrument(symbol)
    portfolio = await portfolio_service.get_owned(session, principal, portfolio_id, for_update=True)
    side = resolve_side(portfolio, position_side)
    positions = await load_positions(session, portfolio_id)
    position = positions.get(position_key(instrument.symbol, side))
    if position is None or position.margin_type != MarginType.ISOLATED or position.quantity == ZERO:
        raise NotIsolated(
            f"{instrument.symbol} has no open isolated {side} position to add margin to or "
            "take margin from."
        )
    mark = venue.quote(instrument.symbol).mark_price
    if kind == ADD:
        open_margin = await open_order_margin(session, portfolio_id)
        state, _ = account(venue.market, portfolio, list(positions.values()), open_margin)
        if amount > state.available_balance_raw:
            raise CrossBalanceInsufficient(
                f"{money_text(amount)} USDT asked, {money_text(state.available_balance)} available."
            )
        booked = -post(
            uow,
            portfolio,
            LedgerKind.ISOLATED_MARGIN,
            -amount,
            symbol=instrument.symbol,
            note=f"margin added to the isolated {side} position",
        )
    else:
        removable = margin.isolated_removable(position_input(instrument, position, mark))
        if amount > removable:
            raise IsolatedBalanceInsufficient(
                f"At most {money_text(removable)} USDT can be taken from this position now."
            )
        booked = -post(
            uow,
            portfolio,
            LedgerKind.ISOLATED_MARGIN,
            amount,
            symbol=instrument.symbol,
            note=f"margin taken from the isolated {side} position",
        )
    position.isolated_margin = position.isolated_margin + booked
    session.add(
        PositionMarginChange(
            portfolio_id=portfolio_id,
            symbol=instrument.symbol,
            position_side=side.value,
            type=kind,
            amount=abs(booked),
            created_at=uow.now(),
        )
    )
    uow.emit(
        PositionChanged(portfolio_id=portfolio_id, position=position_event_data(position, mark))
    )
    uow.emit(BalanceChanged(portfolio_id=portfolio_id, balance=portfolio.balance))
    return position


async def margin_history(
    session: AsyncSession,
    portfolio_id: int,
    *,
    symbol: str | None,
    kind: int | None,
    start_ms: int | None,
    end_ms: int | None,
    limit: int,
) -> Sequence[PositionMarginChange]:
    """The user's adds and reductions of isolated margin, oldest first."""
    statement = select(PositionMarginChange).where(
        PositionMarginChange.portfolio_id == portfolio_id
    )
    if symbol is not None:
        statement = statement.where(PositionMarginChange.symbol == symbol)
    if kind is not None:
        statement = statement.where(PositionMarginChange.type == kind)
    if start_ms is not None:
        statement = statement.where(PositionMarginChange.created_at >= start_ms)
    if end_ms is not None:
        statement = statement.where(PositionMarginChange.created_at <= end_ms)
    statement = statement.order_by(PositionMarginChange.id).limit(limit)
    return (await session.scalars(statement)).all()
