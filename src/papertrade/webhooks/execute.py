"""Carry out an alert's commands through the order services, inside the caller's unit of work.

One-way (net) positions, as B1 describes: `buy` while short closes the short and opens the long in
one order; `close_*` reduce only; a target position (`position`/`position_size`) trades the
difference. A command that would change nothing is noted and skipped, not an error.

In hedge mode a command becomes one step per position side it touches (`_hedge_steps`): `buy`
opens on the long side and never closes the short, `close` closes each open side, `reverse`
closes one side and opens the other, and a target position is reached on its side with the
other side closed (docs/webhooks.md).
"""

from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal

from sqlalchemy import select

from papertrade.accounts import service as account_service
from papertrade.auth.principal import Principal
from papertrade.conditional import service as conditional_service
from papertrade.conditional.commands import PlaceConditional
from papertrade.kit.decimals import ZERO, floor_to_step
from papertrade.models import ConditionalOrder, Order, Portfolio
from papertrade.orders import service as order_service
from papertrade.orders import workset
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.lifecycle import transition
from papertrade.orders.pricing import Venue
from papertrade.orders.record import AnyOrder
from papertrade.positions import service as position_service
from papertrade.trading.conditional import ConditionalType, WorkingType
from papertrade.trading.enums import Action, OrderStatus, OrderType, PositionSide, Side
from papertrade.trading.position import sign
from papertrade.trading.values import Instrument
from papertrade.uow import AsyncWork
from papertrade.webhooks.command import Command
from papertrade.webhooks.errors import NotExecutable, SignalError

HUNDRED = Decimal(100)
LONG, SHORT = PositionSide.LONG, PositionSide.SHORT


@dataclass
class Outcome:
    """What an alert did: orders placed, orders cancelled, and notes on skipped commands."""

    orders: list[AnyOrder] = field(default_factory=list)
    canceled: list[Order] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    stops: list[ConditionalOrder] = field(default_factory=list)  # stop-losses placed (sl)

    @property
    def did_something(self) -> bool:
        return bool(self.orders or self.canceled or self.stops)


@dataclass(frozen=True, slots=True)
class Leg:
    side: Side
    quantity: Decimal  # base units: what closes (already on the lot step) plus what opens
    action: Action
    opening: Decimal = ZERO  # the part that opens new exposure, before rounding to the step


@dataclass
class _Context:
    """What sizing a command needs to know about the account and market."""

    cmd: Command
    instrument: Instrument
    portfolio: Portfolio
    current: Decimal  # signed position quantity
    leverage: int
    reference: Decimal  # limit price, or the mark for market orders
    equity: Decimal | None = None


async def execute(
    uow: AsyncWork,
    venue: Venue,
    principal: Principal,
    portfolio: Portfolio,
    commands: list[Command],
    source: str = "webhook",
) -> Outcome:
    """Run every command in order on the (locked) portfolio; any failure raises and the caller
    rolls all of them back. `source` is what the orders record as their origin."""
    outcome = Outcome()
    for cmd in commands:
        await _run(uow, venue, principal, portfolio, cmd, outcome, source)
    return outcome


async def _run(
    uow: AsyncWork,
    venue: Venue,
    principal: Principal,
    portfolio: Portfolio,
    cmd: Command,
    outcome: Outcome,
    source: str = "webhook",
) -> None:
    session = uow.session
    portfolio_id = portfolio.id
    instrument = venue.instrument(cmd.symbol)
    if cmd.action == "cancel":
        canceled = await order_service.cancel_all(uow, portfolio_id, cmd.symbol)
        outcome.canceled += canceled
        if not canceled:
            outcome.notes.append(f"Command {cmd.line}: no open {cmd.symbol} orders to cancel.")
        return
    mark = venue.quote(cmd.symbol).mark_price
    # The same position objects place_all() works with, so a row created here is the one it fills.
    await session.run_sync(lambda sync: workset.load(uow.on(sync), [portfolio_id]))
    loaded = workset.get(uow, portfolio_id)
    assert loaded is not None  # the caller has already checked the portfolio
    positions = loaded.positions
    hedge = portfolio.dual_side_position
    leverage = venue.default_leverage
    for side in position_service.mode_sides(hedge):
        row = positions.get(position_service.position_key(cmd.symbol, side))
        if cmd.leverage is not None:  # one leverage per symbol, on every side (as /fapi sets it)
            row = await position_service.position_for(
                session, positions, portfolio_id, instrument, venue.default_leverage, side
            )
            if row.leverage != cmd.leverage:
                position_service.change_leverage(row, instrument, cmd.leverage, mark)
        if row is not None:
            leverage = row.leverage

    def held(side: PositionSide) -> Decimal:
        row = positions.get(position_service.position_key(cmd.symbol, side))
        return row.quantity if row is not None else ZERO

    steps: list[tuple[Command, PositionSide | None]] = [(cmd, None)]  # the net position
    if hedge:
        steps = list(_hedge_steps(cmd, held(LONG), held(SHORT)))
    for step, on_side in steps:
        current = held(on_side or PositionSide.BOTH)
        await _step(
            uow,
            venue,
            principal,
            portfolio,
            step,
            outcome,
            source,
            current,
            leverage,
            mark,
            on_side,
        )


def _hedge_steps(cmd: Command, long: Decimal, short: Decimal) -> list[tuple[Command, PositionSide]]:
    """A command in hedge mode as steps on one position side each (`short` is negative): each
    step sees only its side's position, so plan() never flips one side into the other."""
    held = [side for side, qty in ((LONG, long), (SHORT, short)) if qty != ZERO]
    close = replace(
        cmd, action="close", qty=None, tp=[], sl=None, position=None, position_size=None
    )
    if cmd.target_mode:
        size = cmd.position_size if cmd.position_size is not None else ZERO
        wanted = cmd.position or ("flat" if size == ZERO else "long" if size > ZERO else "short")
        if wanted == "flat":
            return [(close, side) for side in held] or [(cmd, LONG)]  # nothing to do: noted
        keep = LONG if wanted == "long" else SHORT
        return [(close, side) for side in held if side is not keep] + [(cmd, keep)]
    if cmd.action in ("buy", "close_long"):
        return [(cmd, LONG)]
    if cmd.action in ("sell", "close_short"):
        return [(cmd, SHORT)]
    if cmd.action == "close":  # each open side (a qty applies to each)
        return [(cmd, side) for side in held] or [(cmd, LONG)]
    if len(held) > 1:
        raise NotExecutable(
            f"Command {cmd.line}: {cmd.action} needs one open side, and {cmd.symbol} is held long "
            "and short (hedge mode); send buy, sell, close_long or close_short instead.",
            code="both_sides_open",
        )
    if cmd.action == "add" or not held:  # add to the open side; either one on a flat symbol
        return [(cmd, held[0] if held else LONG)]  # is refused or noted by plan()
    side = held[0]  # reverse: close it, then open the other side with its size (or qty)
    opposite, size = (SHORT, long) if side is LONG else (LONG, -short)
    opening = replace(cmd, action="sell" if side is LONG else "buy")
    if cmd.qty is None:
        opening = replace(opening, qty=size, qty_type="base")
    return [(close, side), (opening, opposite)]


async def _step(
    uow: AsyncWork,
    venue: Venue,
    principal: Principal,
    portfolio: Portfolio,
    cmd: Command,
    outcome: Outcome,
    source: str,
    current: Decimal,
    leverage: int,
    mark: Decimal,
    position_side: PositionSide | None,
) -> None:
    """One order (and its take-profits and stop-loss) on one position: the net one, or in hedge
    mode the `position_side` one."""
    portfolio_id = portfolio.id
    instrument = venue.instrument(cmd.symbol)
    price = _on_tick(cmd.price, instrument) if cmd.order_type == "limit" else None
    sizing = _Context(cmd, instrument, portfolio, current, leverage, price or mark)
    if cmd.qty_type in ("percent", "percent_equity") and cmd.qty is not None:
        state = await account_service.account_state(uow.session, venue.market, portfolio)
        sizing.equity = state.equity
    leg = plan(sizing)
    if leg is None:
        return_note = _nothing_to_do(cmd, current)
        outcome.notes.append(f"Command {cmd.line}: {return_note}")
        return
    step, minimum = instrument.step_size, instrument.min_qty
    opening = floor_to_step(leg.opening, step)
    quantity = floor_to_step(leg.quantity - leg.opening, step) + opening
    if quantity <= ZERO or quantity < minimum or (leg.opening > ZERO and opening < minimum):
        asked = leg.opening if leg.opening > ZERO else leg.quantity
        raise NotExecutable(
            f"Command {cmd.line}: the size comes to {asked.normalize():f} {cmd.symbol}, below "
            f"the minimum {minimum.normalize():f} (lot step {step.normalize():f}); send a "
            "larger qty.",
            code="qty_below_minimum",
        )
    if leg.action is Action.CLOSE and abs(current + leg.side.sign * quantity) == ZERO:
        await _cancel_exits(uow, portfolio_id, cmd.symbol, outcome, position_side)
    if cmd.sl is not None:
        _check_stop_loss(sizing, leg, quantity)
    order = await order_service.place_one(
        uow,
        venue,
        principal,
        PlaceOrder(
            portfolio_id=portfolio_id,
            symbol=cmd.symbol,
            side=leg.side,
            type=OrderType(cmd.order_type),
            action=leg.action,
            quantity=quantity,
            price=price,
            source=source,
            position_side=position_side,
        ),
    )
    outcome.orders.append(order)
    if cmd.tp:
        await _take_profits(uow, venue, principal, portfolio_id, sizing, leg, quantity, outcome)
    if cmd.sl is not None:
        await _stop_loss(
            uow, venue, principal, portfolio_id, sizing, leg, quantity, outcome, order.id
        )


def _on_tick(price: Decimal | None, instrument: Instrument) -> Decimal:
    """A limit price rounded to the nearest tick (alert prices often carry extra digits)."""
    assert price is not None
    tick = instrument.tick_size
    return (price / tick).to_integral_value(rounding=ROUND_HALF_EVEN) * tick


def _nothing_to_do(cmd: Command, current: Decimal) -> str:
    if cmd.target_mode:
        return f"the {cmd.symbol} position is already at the target; nothing to do."
    side = "long" if current > 0 else "short" if current < 0 else "flat"
    return f"{cmd.action} {cmd.symbol} does nothing while the position is {side}."


def _open_size(s: _Context) -> Decimal:
    """Base quantity a command asks to open."""
    cmd = s.cmd
    if cmd.qty is None:
        raise SignalError(
            f"Command {cmd.line}: qty is required to open, e.g. `buy {cmd.symbol} 0.01`, "
            f"`buy {cmd.symbol} 100usdt` or `buy {cmd.symbol} 10%`."
        )
    if cmd.qty_type == "quote":
        return cmd.qty / s.reference
    if cmd.qty_type in ("percent", "percent_equity"):
        assert s.equity is not None
        return max(ZERO, s.equity) * cmd.qty / HUNDRED * s.leverage / s.reference
    if cmd.qty_type == "percent_position":
        if s.current == ZERO:
            raise NotExecutable(
                f"Command {cmd.line}: a percentage of the position needs an open position.",
                code="no_position",
            )
        return abs(s.current) * cmd.qty / HUNDRED
    return cmd.qty


def _close_size(s: _Context) -> Decimal:
    """Base quantity a reducing command asks to close (all when no qty), capped at the position."""
    cmd = s.cmd
    held = abs(s.current)
    if cmd.qty is None:
        return held
    if cmd.qty_type in ("percent", "percent_position"):
        return min(held, held * cmd.qty / HUNDRED)
    return min(held, _open_size(s))


def plan(s: _Context) -> Leg | None:
    """The one order a command needs, or None when it would change nothing."""
    cmd, current = s.cmd, s.current
    if cmd.target_mode:
        return _towards(current, _target(s))
    if cmd.action in ("buy", "sell"):
        side = Side.BUY if cmd.action == "buy" else Side.SELL
        size = _open_size(s)
        # Against an opposite position: one order closes it and opens `size` (a flip).
        closing = abs(current) if sign(current) == -side.sign else ZERO
        return Leg(side, closing + size, Action.OPEN, opening=size)
    if cmd.action == "add":
        if current == ZERO:
            raise NotExecutable(
                f"Command {cmd.line}: add increases an open position, and {cmd.symbol} is flat.",
                code="no_position",
            )
        size = _open_size(s)
        return Leg(Side.BUY if current > 0 else Side.SELL, size, Action.OPEN, opening=size)
    wanted = {
        "close_long": 1,
        "close_short": -1,
        "close": sign(current),
        "reverse": sign(current),
    }
    if current == ZERO or sign(current) != wanted[cmd.action]:
        return None
    reducing = Side.SELL if current > 0 else Side.BUY
    if cmd.action == "reverse":
        size = _open_size(s) if cmd.qty is not None else abs(current)
        return Leg(reducing, abs(current) + size, Action.OPEN, opening=size)
    return Leg(reducing, _close_size(s), Action.CLOSE)


def _target(s: _Context) -> Decimal:
    cmd = s.cmd
    if cmd.position == "flat":
        return ZERO
    if cmd.position is None:
        assert cmd.position_size is not None
        return cmd.position_size
    if cmd.position_size is not None:
        size = abs(cmd.position_size)
    elif cmd.qty is not None:
        size = _open_size(s)
    else:
        raise SignalError(
            f"Command {cmd.line}: position {cmd.position} needs position_size (or qty) to say how "
            "large the target position is."
        )
    return size if cmd.position == "long" else -size


def _towards(current: Decimal, target: Decimal) -> Leg | None:
    delta = target - current
    if delta == ZERO:
        return None
    side = Side.BUY if delta > 0 else Side.SELL
    if sign(target) != -sign(current) and abs(target) < abs(current):
        return Leg(side, abs(delta), Action.CLOSE)
    # Opening part: beyond zero on the target's side (all of it when current is on that side).
    opening = abs(target) if sign(target) != sign(current) else abs(delta)
    return Leg(side, abs(delta), Action.OPEN, opening=opening)


async def _cancel_exits(
    uow: AsyncWork,
    portfolio_id: int,
    symbol: str,
    outcome: Outcome,
    position_side: PositionSide | None,
) -> None:
    """A full close also cancels the position's resting reduce-only orders (earlier
    take-profits) and waiting stops: in hedge mode, those of the closed side only."""
    statement = select(Order).where(
        Order.portfolio_id == portfolio_id,
        Order.symbol == symbol,
        Order.is_open.is_(True),
        Order.action == Action.CLOSE.value,
    )
    if position_side is not None:
        statement = statement.where(Order.position_side == position_side.value)
    for order in await uow.session.scalars(statement.with_for_update()):
        transition(uow, order, OrderStatus.CANCELED, "the alert closed the position")
        outcome.canceled.append(order)
    stops = await conditional_service.cancel_closing_in(uow, portfolio_id, symbol, position_side)
    if stops:
        outcome.notes.append(f"cancelled {len(stops)} waiting stop/take-profit order(s)")


async def _take_profits(
    uow: AsyncWork,
    venue: Venue,
    principal: Principal,
    portfolio_id: int,
    s: _Context,
    leg: Leg,
    quantity: Decimal,
    outcome: Outcome,
) -> None:
    """Reduce-only limit orders at the tp prices, the new position split evenly across them."""
    cmd, step = s.cmd, s.instrument.step_size
    after = s.current + leg.side.sign * quantity
    if cmd.order_type != "market" or leg.action is Action.CLOSE or after == ZERO:
        raise SignalError(
            f"Command {cmd.line}: tp applies to market orders that open or increase a position."
        )
    exit_side = Side.SELL if after > 0 else Side.BUY
    prices = [_on_tick(p, s.instrument) for p in cmd.tp]
    mark = s.reference
    wrong = [p for p in prices if (p <= mark if after > 0 else p >= mark)]
    if wrong:
        where = "above" if after > 0 else "below"
        raise SignalError(
            f"Command {cmd.line}: take-profit {wrong[0].normalize():f} must be {where} the "
            f"price {mark.normalize():f} for a {'long' if after > 0 else 'short'} position."
        )
    each = floor_to_step(abs(after) / len(prices), step)
    sizes = [each] * (len(prices) - 1) + [abs(after) - each * (len(prices) - 1)]
    for price, size in zip(prices, sizes, strict=True):
        if size <= ZERO:
            continue
        order = await order_service.place_one(
            uow,
            venue,
            principal,
            PlaceOrder(
                portfolio_id=portfolio_id,
                symbol=cmd.symbol,
                side=exit_side,
                type=OrderType.LIMIT,
                action=Action.CLOSE,
                quantity=size,
                price=price,
                source="webhook",
            ),
        )
        outcome.orders.append(order)


def _check_stop_loss(s: _Context, leg: Leg, quantity: Decimal) -> Decimal:
    """The sl trigger on the tick, refused unless it protects the position the order leaves."""
    cmd = s.cmd
    after = s.current + leg.side.sign * quantity
    if cmd.order_type != "market" or leg.action is Action.CLOSE or after == ZERO:
        raise SignalError(
            f"Command {cmd.line}: sl applies to market orders that open or increase a position."
        )
    trigger = _on_tick(cmd.sl, s.instrument)
    mark = s.reference
    if trigger >= mark if after > 0 else trigger <= mark:
        where = "below" if after > 0 else "above"
        raise SignalError(
            f"Command {cmd.line}: stop-loss {trigger.normalize():f} must be {where} the price "
            f"{mark.normalize():f} for a {'long' if after > 0 else 'short'} position."
        )
    return trigger


async def _stop_loss(
    uow: AsyncWork,
    venue: Venue,
    principal: Principal,
    portfolio_id: int,
    s: _Context,
    leg: Leg,
    quantity: Decimal,
    outcome: Outcome,
    entry_id: int,
) -> None:
    """A STOP_MARKET that closes the whole position when the last price reaches sl."""
    trigger = _check_stop_loss(s, leg, quantity)
    after = s.current + leg.side.sign * quantity
    stop = await place_stop_loss(
        uow, venue, principal, portfolio_id, s.cmd.symbol, after > 0, trigger, "webhook", entry_id
    )
    outcome.stops.append(stop)
    outcome.notes.append(
        f"stop-loss {trigger.normalize():f} placed (conditional order {stop.id}, closes the "
        f"{s.cmd.symbol} position)"
    )


async def place_stop_loss(
    uow: AsyncWork,
    venue: Venue,
    principal: Principal,
    portfolio_id: int,
    symbol: str,
    long: bool,
    trigger: Decimal,
    source: str,
    origin_order_id: int | None = None,
) -> ConditionalOrder:
    """The stop-loss every signal source places: a close-position STOP_MARKET watching the mark
    (the price a signal's stop is checked against), so it closes whatever the position is."""
    return await conditional_service.place_in(
        uow,
        venue,
        principal,
        PlaceConditional(
            portfolio_id=portfolio_id,
            symbol=symbol,
            side=Side.SELL if long else Side.BUY,
            type=ConditionalType.STOP_MARKET,
            trigger_price=trigger,
            close_position=True,
            working_type=WorkingType.MARK_PRICE,
            source=source,
            origin_order_id=origin_order_id,
        ),
    )
