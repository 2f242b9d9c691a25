"""Placing the orders of every deployment that traded on one closed bar, in one unit of work.

A thousand deployments on one symbol all fire on the same bar close. Placing each signal in a
transaction of its own cost a commit, a portfolio load and an order-id reservation per signal;
here the bar is claimed for all of them with one UPDATE, their portfolios are loaded once
(`orders.workset`), their orders go through one `orders.service.place_all` per round (round k
holds every deployment's k-th order of the bar, so a `close long, short` rule sees its close
before it sizes its short), and the signal rows go in with one executemany. The sizing and the
one-way rules are the TradingView-webhook executor's (webhooks/execute.py): `%` is margin as a
share of equity times leverage, an entry against the position closes it in the same order, an
entry on the side already held does nothing (no pyramiding, as in backtests).

Stops and targets (a DSL program's `stop_loss`/`take_profit`, a Python `buy(sl=, tp=)`) are
attached to the entry the way `/v1/order`'s `take_profit`/`stop_loss` are: close-position
TAKE_PROFIT_MARKET / STOP_MARKET conditional orders watching the mark, placed right after the
entry, cancelled when the position is closed (conditional.service.cancel_closing). A LIMIT entry
(Python `limit=`) rests for one bar, as in backtests: if it has not filled when the next bar
closes, the deployment cancels it (and its exits, if no position came of it).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any, cast

from sqlalchemy import Table, insert, or_, select, update
from sqlalchemy.orm import Session

from papertrade.auth.principal import Principal
from papertrade.conditional import service as conditional_service
from papertrade.conditional.commands import PlaceConditional
from papertrade.errors import PapertradeError
from papertrade.kit.decimals import ZERO, floor_to_step, plain
from papertrade.models import Order, StrategyDeployment, StrategySignal
from papertrade.orders import service as order_service
from papertrade.orders import workset
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.lifecycle import transition
from papertrade.orders.pricing import Venue
from papertrade.orders.record import OrderRecord
from papertrade.portfolios import service as portfolio_service
from papertrade.positions import service as position_service
from papertrade.strategies.events import StrategySignalled
from papertrade.trading import margin
from papertrade.trading.conditional import ConditionalType, WorkingType
from papertrade.trading.enums import Action, OrderStatus, OrderType, Side
from papertrade.trading.errors import TradingRuleError
from papertrade.trading.values import Instrument
from papertrade.uow import SyncWork

HUNDRED = Decimal(100)
_SIGNALS = cast(Table, StrategySignal.__table__)
SOURCE = "strategy"


@dataclass(frozen=True)
class Wanted:
    """One order a strategy asked for on the bar: the rule or call that asked, and what."""

    rule: str
    action: str  # buy | sell | close_long | close_short | close
    qty: Decimal | None = None
    qty_type: str = "base"  # base | quote | percent_equity
    leverage: int | None = None
    limit: Decimal | None = None  # a LIMIT entry at this price (good for one bar)
    stop_loss: Decimal | None = None  # trigger prices
    take_profit: Decimal | None = None
    stop_loss_pct: float | None = None  # or distances from the entry's reference price
    take_profit_pct: float | None = None
    trailing_stop_pct: float | None = None  # a trailing stop this far behind the best price

    @property
    def entry(self) -> bool:
        return self.action in ("buy", "sell")


@dataclass(frozen=True)
class Member:
    """A deployment acting on the bar, and the orders it asked for (in order)."""

    deployment_id: int
    strategy_id: int
    user_id: int
    portfolio_id: int
    version: int
    symbol: str
    wanted: Sequence[Wanted]
    may_rest: bool = False  # may have a resting LIMIT entry from an earlier bar (Python)

    @property
    def principal(self) -> Principal:
        # the owner acting through the deployment (never a key of theirs)
        return Principal(
            kind="api_key",
            user_id=self.user_id,
            credential_id=self.deployment_id,
            portfolio_id=self.portfolio_id,
        )


@dataclass
class Placed:
    """What placing a bar did: deployments that had it claimed already, those whose
    portfolio is gone (to pause), and the number of signals recorded."""

    claimed: int = 0
    signals: int = 0
    orphaned: list[tuple[Member, str]] = field(default_factory=list)  # and why


@dataclass
class _Signal:
    member: Member
    wanted: Wanted
    intent: dict[str, Any]
    outcome: str = "skipped"
    reason: str = ""
    order_id: int | None = None
    exits: list[PlaceConditional] = field(default_factory=list)  # to attach to the entry


def place_bar(uow: SyncWork, venue: Venue, bar_open: int, members: Sequence[Member]) -> Placed:
    """Claim `bar_open` for `members` and place all their orders (see the module's doc)."""
    session = uow.session
    done = Placed()
    claimed = _claim(session, bar_open, [m.deployment_id for m in members])
    members = [m for m in members if m.deployment_id in claimed]
    done.claimed = len(members)
    if not members:
        return done
    workset.load(uow, {m.portfolio_id for m in members})
    active: list[Member] = []
    for member in members:
        state = workset.get(uow, member.portfolio_id)
        try:
            portfolio_service.check_owned(
                state.portfolio if state else None, member.principal, member.portfolio_id
            )
        except PapertradeError as gone:  # deleted: not a refusal, the deployment cannot go on
            done.orphaned.append((member, f"{type(gone).__name__}: {gone}"))
            continue
        active.append(member)
    _expire_limits(uow, session, [m for m in active if m.may_rest])
    signals: list[_Signal] = []
    rounds = max((len(m.wanted) for m in active), default=0)
    for k in range(rounds):
        batch = [(m, m.wanted[k]) for m in active if k < len(m.wanted)]
        signals += _round(uow, venue, batch)
    _record(uow, session, bar_open, signals)
    done.signals = len(signals)
    return done


def _claim(session: Session, bar_open: int, deployment_ids: list[int]) -> set[int]:
    """Mark the bar as evaluated, atomically: only the pass that moves a deployment's bar acts
    on it, so a bar's signals are emitted once however many passes overlap."""
    moved = session.execute(
        update(StrategyDeployment)
        .where(
            StrategyDeployment.id.in_(deployment_ids),
            StrategyDeployment.status == "running",
            or_(
                StrategyDeployment.last_bar_ms.is_(None),
                StrategyDeployment.last_bar_ms < bar_open,
            ),
        )
        .values(last_bar_ms=bar_open)
        .returning(StrategyDeployment.id)
        .execution_options(synchronize_session=False)
    )
    return set(moved.scalars())


def _expire_limits(uow: SyncWork, session: Session, members: list[Member]) -> None:
    """A LIMIT entry lives for the bar after the one that asked for it: cancel those still
    resting, and their exits when no position came of them."""
    if not members:
        return
    by_deployment = {m.deployment_id: m for m in members}
    resting = session.scalars(
        select(Order)
        .where(
            Order.portfolio_id.in_({m.portfolio_id for m in members}),
            Order.is_open.is_(True),
            Order.source == SOURCE,
            Order.id.in_(
                select(StrategySignal.order_id).where(
                    StrategySignal.deployment_id.in_(by_deployment),
                    StrategySignal.outcome == "executed",
                )
            ),
        )
        .with_for_update()
    )
    for order in resting:
        transition(uow, order, OrderStatus.CANCELED, "the strategy's limit entry lasts one bar")
        state = workset.get(uow, order.portfolio_id)
        held = state.positions.get(order.symbol) if state else None
        if held is None or held.quantity == ZERO:
            conditional_service.cancel_closing(uow, session, order.portfolio_id, order.symbol)


def _round(uow: SyncWork, venue: Venue, batch: list[tuple[Member, Wanted]]) -> list[_Signal]:
    """Plan each deployment's next order against its portfolio as it is now, place those
    that trade with one place_all, and attach or cancel exits."""
    signals: list[_Signal] = []
    requests: list[tuple[Principal, PlaceOrder]] = []
    placing: list[tuple[_Signal, Decimal]] = []  # and the position before
    for member, wanted in batch:
        signal = _Signal(member, wanted, _intent(member.symbol, wanted))
        signals.append(signal)
        try:
            command, before = _plan(uow, venue, member, wanted, signal)
        except (PapertradeError, TradingRuleError) as refused:
            signal.outcome, signal.reason = "refused", _message(refused)
            continue
        if command is not None:
            requests.append((member.principal, command))
            placing.append((signal, before))
    outcomes = order_service.place_all(uow, venue, requests)
    for (signal, before), outcome in zip(placing, outcomes, strict=True):
        if not isinstance(outcome, OrderRecord):
            signal.outcome, signal.reason = "refused", _message(outcome)
            continue
        signal.outcome, signal.order_id = "executed", outcome.id
        signal.reason = f"order {outcome.status}"
        try:
            _exits(uow, venue, signal, outcome, before)
        except (PapertradeError, TradingRuleError) as refused:
            signal.reason += f"; stop/target not placed: {_message(refused)}"
    return signals


def _plan(
    uow: SyncWork, venue: Venue, member: Member, wanted: Wanted, signal: _Signal
) -> tuple[PlaceOrder | None, Decimal]:
    """The order for `wanted` (None: it would change nothing; the signal says why)."""
    state = workset.get(uow, member.portfolio_id)
    assert state is not None
    instrument = venue.instrument(member.symbol)
    held = state.positions.get(instrument.symbol)
    current = held.quantity if held is not None else ZERO
    if not wanted.entry:
        side_held = 1 if current > 0 else -1 if current < 0 else 0
        wants = {"close_long": 1, "close_short": -1, "close": side_held}[wanted.action]
        if current == ZERO or side_held != wants:
            signal.reason = f"nothing to close: the position is {_side_name(current)}"
            return None, current
        return (
            PlaceOrder(
                portfolio_id=member.portfolio_id,
                symbol=instrument.symbol,
                side=None,
                type=OrderType.MARKET,
                action=Action.CLOSE,
                quantity=abs(current),
                source=SOURCE,
            ),
            current,
        )
    side = Side.BUY if wanted.action == "buy" else Side.SELL
    if current * side.sign > 0:
        signal.reason = f"already {_side_name(current)}: no pyramiding"
        return None, current
    mark = venue.quote(instrument.symbol).mark_price
    if wanted.leverage is not None:
        if held is None:
            held = position_service.flat_position(
                member.portfolio_id, instrument, venue.default_leverage
            )
            uow.session.add(held)
            state.positions[instrument.symbol] = held
        if held.leverage != wanted.leverage:
            position_service.change_leverage(held, instrument, wanted.leverage, mark)
    leverage = held.leverage if held is not None else venue.default_leverage
    price = _on_tick(wanted.limit, instrument) if wanted.limit is not None else None
    reference = price or mark
    opening = floor_to_step(
        _size(uow, venue, state, wanted, leverage, reference), instrument.step_size
    )
    if opening < instrument.min_qty or opening <= ZERO:
        raise PapertradeError(
            f"the size comes to {plain(opening)} {instrument.symbol}, below the minimum "
            f"{plain(instrument.min_qty)}",
            code="qty_below_minimum",
        )
    exits = _exit_orders(member, wanted, instrument, side, reference)
    conditional_service.check_attached(venue, exits)  # refused before the entry goes in
    signal.exits = exits
    if exits:
        # Each exit's price, or a trailing stop's distance (percent).
        shown = (
            (key, c.trigger_price or c.callback_rate)
            for key, c in zip(_exit_keys(wanted), exits, strict=True)
        )
        signal.intent.update({key: plain(value) for key, value in shown if value is not None})
    return (
        PlaceOrder(
            portfolio_id=member.portfolio_id,
            symbol=instrument.symbol,
            side=side,
            type=OrderType.LIMIT if price is not None else OrderType.MARKET,
            action=Action.OPEN,
            quantity=abs(current) + opening,  # against a position: close it and open (a flip)
            price=price,
            source=SOURCE,
        ),
        current,
    )


def _size(
    uow: SyncWork,
    venue: Venue,
    state: workset.PortfolioState,
    wanted: Wanted,
    leverage: int,
    reference: Decimal,
) -> Decimal:
    assert wanted.qty is not None
    if wanted.qty_type == "quote":
        return wanted.qty / reference
    if wanted.qty_type == "percent_equity":
        account = margin.account_state(
            state.portfolio.balance,
            position_service.position_inputs(venue.market, list(state.positions.values())),
            state.open_margin,
        )
        return max(ZERO, account.equity) * wanted.qty / HUNDRED * leverage / reference
    return wanted.qty


def _exit_keys(wanted: Wanted) -> list[str]:
    keys = []
    if wanted.take_profit is not None or wanted.take_profit_pct:
        keys.append("tp")
    if wanted.stop_loss is not None or wanted.stop_loss_pct:
        keys.append("sl")
    if wanted.trailing_stop_pct:
        keys.append("trailing_stop_pct")
    return keys


def _exit_orders(
    member: Member, wanted: Wanted, instrument: Instrument, side: Side, reference: Decimal
) -> list[PlaceConditional]:
    """The entry's TP/SL: given prices, or percentages of the entry's reference price (the
    mark a market entry fills at, or the limit)."""
    take_profit, stop_loss = wanted.take_profit, wanted.stop_loss
    if take_profit is None and wanted.take_profit_pct:
        move = reference * Decimal(repr(wanted.take_profit_pct)) / HUNDRED
        take_profit = reference + side.sign * move
    if stop_loss is None and wanted.stop_loss_pct:
        move = reference * Decimal(repr(wanted.stop_loss_pct)) / HUNDRED
        stop_loss = reference - side.sign * move
    exits = conditional_service.attached(
        member.portfolio_id,
        instrument.symbol,
        side.opposite,
        take_profit=None if take_profit is None else _on_tick(take_profit, instrument),
        stop_loss=None if stop_loss is None else _on_tick(stop_loss, instrument),
        working_type=WorkingType.MARK_PRICE,
        source=SOURCE,
    )
    if wanted.trailing_stop_pct:
        # The backtest's trailing stop, live: it follows the best mark from the entry on and
        # closes the whole position `trailing_stop_pct` percent behind it.
        exits.append(
            PlaceConditional(
                portfolio_id=member.portfolio_id,
                symbol=instrument.symbol,
                side=side.opposite,
                type=ConditionalType.TRAILING_STOP_MARKET,
                callback_rate=Decimal(repr(wanted.trailing_stop_pct)),
                close_position=True,
                working_type=WorkingType.MARK_PRICE,
                source=SOURCE,
            )
        )
    return exits


def _exits(
    uow: SyncWork, venue: Venue, signal: _Signal, order: OrderRecord, before: Decimal
) -> None:
    """After an order went in: a position that was closed or flipped loses its old TP/SL; an
    entry that asked for them gets its new ones (like /v1/order's attached TP/SL)."""
    member, wanted = signal.member, signal.wanted
    state = workset.get(uow, member.portfolio_id)
    held = state.positions.get(order.symbol) if state else None
    after = held.quantity if held is not None else ZERO
    flipped = before != ZERO and (after == ZERO or (after > 0) != (before > 0))
    if flipped:
        conditional_service.cancel_closing(uow, uow.session, member.portfolio_id, order.symbol)
    if not wanted.entry or order.status not in ("new", "partially_filled", "filled"):
        return
    exits = signal.exits  # as checked before the entry went in (the intent shows them)
    if exits and not flipped:
        conditional_service.cancel_closing(uow, uow.session, member.portfolio_id, order.symbol)
    for command in exits:
        attached = replace(command, origin_order_id=order.id)
        conditional_service.place(uow, venue, member.principal, attached)


def _record(uow: SyncWork, session: Session, bar_open: int, signals: list[_Signal]) -> None:
    """The signal rows in one executemany, and an event each (the `signals` channel)."""
    if not signals:
        return
    now = uow.now()
    rows = []
    for s in signals:
        m = s.member
        rule, reason = s.wanted.rule[:300], s.reason[:500]
        rows.append(
            {
                "strategy_id": m.strategy_id,
                "deployment_id": m.deployment_id,
                "version": m.version,
                "time": now,
                "bar_time": bar_open,
                "rule": rule,
                "intent": s.intent,
                "outcome": s.outcome,
                "reason": reason,
                "order_id": s.order_id,
            }
        )
        uow.emit(
            StrategySignalled(
                portfolio_id=m.portfolio_id,
                payload={
                    "strategy_id": m.strategy_id,
                    "deployment_id": m.deployment_id,
                    "version": m.version,
                    "bar_time": bar_open,
                    "rule": rule,
                    "intent": s.intent,
                    "outcome": s.outcome,
                    "reason": reason,
                    "order_id": s.order_id,
                },
            )
        )
    # Core, not the ORM's bulk path: the rows need no identity, and no autoflush before them
    session.execute(insert(_SIGNALS), rows)


def _intent(symbol: str, wanted: Wanted) -> dict[str, Any]:
    """The order asked, as the signal history shows it (the webhook command's field names)."""
    out: dict[str, Any] = {"action": wanted.action, "symbol": symbol}
    if wanted.entry:
        assert wanted.qty is not None
        out.update(
            qty=str(wanted.qty),
            qty_type=wanted.qty_type,
            order_type="limit" if wanted.limit is not None else "market",
        )
        if wanted.leverage is not None:
            out["leverage"] = wanted.leverage
        if wanted.limit is not None:
            out["price"] = str(wanted.limit)
    return out


def _side_name(quantity: Decimal) -> str:
    return "long" if quantity > 0 else "short" if quantity < 0 else "flat"


def _on_tick(price: Decimal, instrument: Instrument) -> Decimal:
    tick = instrument.tick_size
    return (price / tick).to_integral_value(rounding=ROUND_HALF_EVEN) * tick


def _message(exc: BaseException) -> str:
    return str(getattr(exc, "message", None) or exc)[:500]
