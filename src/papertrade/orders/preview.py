"""What an order would do before it is sent: the quantity after step rounding, its cost, margin,
fee and the position's estimated liquidation price, computed by the same kernel that fills it.

Nothing is written. The web ticket asks this as the user types, so what it shows is what the
order path will do, not a second implementation in the browser.
"""

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.kit.decimals import ZERO, plain, price_text, to_tick
from papertrade.market.feed import MarketFeed
from papertrade.models import Portfolio, Position
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.pricing import Venue, instrument_of
from papertrade.positions import service as positions
from papertrade.trading import margin
from papertrade.trading import orders as rules
from papertrade.trading.enums import Action, Liquidity, MarginType, OrderType, PositionSide, Side
from papertrade.trading.errors import QtyTooSmall, TradingRuleError
from papertrade.trading.fees import FeeSchedule
from papertrade.trading.values import Instrument


@dataclass(frozen=True, slots=True)
class Preview:
    symbol: str
    side: Side | None
    quantity: Decimal  # after step rounding; 0 when no quantity can be sent
    price: Decimal  # the mark for a market order, the limit price otherwise
    notional: Decimal
    leverage: int
    initial_margin: Decimal
    fee_rate: Decimal
    fee: Decimal
    liquidity: Liquidity
    available: Decimal
    liquidation_price: Decimal | None  # the position's after this order fills
    min_quantity: Decimal  # the smallest quantity both the step/min-qty and min-notional allow
    min_notional: Decimal  # that quantity's value at `price`
    minimum_text: str  # "min 0.002 BTC ≈ 186.00 USDT"
    problems: list[str]


def minimum_quantity(instrument: Instrument, price: Decimal) -> Decimal:
    """The smallest sendable quantity at `price`: min qty, and enough to reach min notional."""
    by_notional = (
        to_tick(instrument.min_notional / price, instrument.step_size, ROUND_CEILING)
        if price
        else ZERO
    )
    return max(instrument.min_qty, instrument.step_size, by_notional)


def _cents(amount: Decimal) -> str:
    """An amount to show beside a minimum: whole cents, rounded up so it is enough, with
    thousands separators as the app shows amounts ("1,186.00")."""
    return f"{amount.quantize(Decimal('0.01'), rounding=ROUND_CEILING):,f}"


def _usd(amount: Decimal, rounding: str) -> str:
    """A USDT amount in a sentence, as the app shows amounts: cents, separators ("50,497.78")."""
    return f"{amount.quantize(Decimal('0.01'), rounding=rounding):,f}"


async def preview(
    session: AsyncSession, venue: Venue, portfolio: Portfolio, cmd: PlaceOrder
) -> Preview:
    feed = venue.market
    instrument = instrument_of(feed, cmd.symbol)
    held = await positions.load_positions(session, portfolio.id)
    open_margin = await positions.open_order_margin(session, portfolio.id)
    state, _ = positions.account(feed, portfolio, list(held.values()), open_margin)
    key = _key(portfolio, held, cmd)
    position = held.get(key)
    position_qty = position.quantity if position is not None else ZERO
    # Leverage and margin type are the symbol's, on each of its rows.
    any_row = positions.sibling(held, cmd.symbol)
    leverage = (
        any_row.leverage
        if any_row is not None
        else min(venue.default_leverage, instrument.max_leverage)
    )
    isolated = any_row is not None and any_row.margin_type == MarginType.ISOLATED
    mark = positions.mark_of(feed, cmd.symbol, ZERO)
    price = cmd.price if cmd.type is OrderType.LIMIT and cmd.price else mark
    problems: list[str] = []

    side = cmd.side
    if cmd.action is Action.CLOSE:
        side = rules.reducing_side(position_qty)
        if side is None:
            problems.append(f"There is no {cmd.symbol} position to close.")
    smallest = minimum_quantity(instrument, price) if price > ZERO else instrument.min_qty
    too_small = (
        f"Below the minimum order: {plain(smallest)} {instrument.base_asset} "
        f"≈ {_cents(smallest * price)} USDT."
    )
    quantity = ZERO
    if price > ZERO:
        try:
            if cmd.quantity is not None:
                quantity = cmd.quantity
            elif cmd.size_usd is not None:
                quantity = rules.quantity_from_size_usd(
                    cmd.size_usd,
                    price,
                    instrument.step_size,
                    instrument.min_qty,
                    instrument.tick_size,
                )
        except QtyTooSmall:
            problems.append(too_small)
        except TradingRuleError as exc:
            problems.append(exc.message)
    else:
        problems.append(f"No price for {cmd.symbol} yet.")
    if cmd.action is Action.CLOSE and side is not None and quantity > ZERO:
        quantity = min(quantity, abs(position_qty))

    notional = quantity * price
    opening = cmd.action is Action.OPEN
    below = quantity < instrument.min_qty or notional < instrument.min_notional
    if quantity > ZERO and opening and below:
        problems.append(too_small)
    liquidity = Liquidity.MAKER if cmd.type is OrderType.LIMIT else Liquidity.TAKER
    fees = FeeSchedule(portfolio.maker_fee_rate, portfolio.taker_fee_rate)
    initial = margin.initial_margin(notional, leverage) if opening else ZERO
    fee = fees.commission(notional, liquidity)
    if opening and initial + fee > state.available_balance and quantity > ZERO:
        problems.append(
            # what is needed rounded up, what is available down: never "needs 5.00; 5.00 is"
            f"Needs {_usd(initial + fee, ROUND_CEILING)} USDT of margin and fee; "
            f"{_usd(state.available_balance, ROUND_FLOOR)} USDT is available."
        )

    signed = quantity if side is Side.BUY else -quantity
    liquidation = _liquidation_after(
        feed, held, portfolio, key, signed, price, leverage, initial if isolated else None
    )
    return Preview(
        symbol=cmd.symbol,
        side=side,
        quantity=quantity,
        price=price,
        notional=notional,
        leverage=leverage,
        initial_margin=initial,
        fee_rate=fees.rate(liquidity),
        fee=fee,
        liquidity=liquidity,
        available=state.available_balance,
        liquidation_price=liquidation,
        min_quantity=smallest,
        min_notional=smallest * price,
        minimum_text=(
            f"min {plain(smallest)} {instrument.base_asset} ≈ "
            f"{_cents(smallest * price)} USDT at {price_text(price, instrument.tick_size)}"
        ),
        problems=problems,
    )


def _key(portfolio: Portfolio, held: dict[str, Position], cmd: PlaceOrder) -> str:
    """The position row the order trades: the symbol's one row in one-way mode; in hedge mode
    LONG for a buy that opens (SHORT for a sell), and the held side for a close."""
    if not portfolio.dual_side_position:
        return positions.position_key(cmd.symbol, PositionSide.BOTH)
    if cmd.action is Action.CLOSE:
        long = held.get(positions.position_key(cmd.symbol, PositionSide.LONG))
        held_long = long is not None and long.quantity != ZERO
        side = PositionSide.LONG if held_long else PositionSide.SHORT
    else:
        side = PositionSide.LONG if cmd.side is Side.BUY else PositionSide.SHORT
    return positions.position_key(cmd.symbol, side)


def _liquidation_after(
    feed: MarketFeed | None,
    held: dict[str, Position],
    portfolio: Portfolio,
    key: str,
    signed_qty: Decimal,
    price: Decimal,
    leverage: int,
    added_isolated_margin: Decimal | None,
) -> Decimal | None:
    """The liquidation price of the position at `key` once the order has filled at `price`
    (fees aside): cross, with the account's other cross positions held at their marks, or
    isolated, on its own margin plus what this order adds."""
    if signed_qty == ZERO:
        return None
    others = [p for k, p in held.items() if k != key]
    inputs = positions.position_inputs(feed, others)
    current = held.get(key)
    qty, entry = (current.quantity, current.entry_price) if current is not None else (ZERO, ZERO)
    new_qty = qty + signed_qty
    if new_qty == ZERO:
        return None
    if qty == ZERO or (qty > ZERO) != (signed_qty > ZERO):
        # Opening, or reducing/flipping: what stays keeps its entry, a flip enters at `price`.
        new_entry = entry if qty != ZERO and (qty > ZERO) == (new_qty > ZERO) else price
    else:
        new_entry = (qty * entry + signed_qty * price) / new_qty
    instrument = instrument_of(feed, current.symbol if current is not None else key.split(":")[0])
    isolated = None
    if added_isolated_margin is not None:
        isolated = (
            current.isolated_margin if current is not None else ZERO
        ) + added_isolated_margin
    inputs.append(margin.PositionInput(instrument, new_qty, new_entry, price, leverage, isolated))
    found = margin.liquidation_prices(portfolio.balance, inputs)[-1]
    if found is None:
        return None
    return positions.shown_liquidation_price(found, new_qty, instrument.tick_size)
