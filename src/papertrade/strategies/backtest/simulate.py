"""Simulate a DSL program over bars, filling through the trading kernel.

The signals come from the vectorised evaluator; only the bars where a rule fires (and the bars
where a stop or target is hit) are visited one by one, so a run over a million bars costs the
indicators plus a step per signal. Fills are exactly the live portfolio's: `trading.position`
applies them and `trading.fees` charges them, in Decimal.

Assumptions (stated with every result, see ASSUMPTIONS): a rule that fires on bar t's close
fills at bar t+1's open as a taker (market order); no pyramiding (an entry while already on that
side does nothing; the opposite side is closed first); stop-loss/take-profit/trailing stops are
checked against each bar's low and high from the fill bar on, the stop first when one bar touches
both, filled at the stop price or at the open when the bar gaps through it; funding is charged at
each funding time on the position then open, at that bar's close; liquidation is not simulated
(an entry needs its margin, and the run stops if equity reaches zero).
"""

from dataclasses import dataclass, field
from decimal import ROUND_HALF_EVEN, Decimal

import numpy as np
from numpy.typing import NDArray

from papertrade.kit.decimals import ZERO, floor_to_step
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl import ast
from papertrade.strategies.dsl.evaluate import Evaluator
from papertrade.trading.enums import Liquidity
from papertrade.trading.fees import FeeSchedule
from papertrade.trading.funding import funding_payment
from papertrade.trading.position import apply_fill, sign

ASSUMPTIONS = {
    "fill": "A rule that fires on a bar's close fills at the next bar's open, as a market "
    "(taker) order; nothing uses a bar before it has closed (no look-ahead).",
    "fees": "Every fill pays the taker fee rate on its notional, except a limit entry that fills "
    "at its limit inside the bar (a resting order: the maker rate).",
    "funding": "Charged at every funding time inside the period [start, end) on the position "
    "open then, at that bar's close, with the feed's funding rate (0 when the feed has no "
    "funding history).",
    "stops": "stop_loss / take_profit / trailing_stop (and a Python order's sl / tp prices) are "
    "checked on each bar's low and high from the fill bar on; the order of prices inside a bar "
    "is unknown, so when one bar touches both the stop is assumed first (the pessimistic "
    "reading, no look-ahead); a bar that opens beyond a level fills at its open.",
    "limit": "A Python limit entry is good for the next bar only: it fills at that bar's open "
    "when the open is already through the limit (taker), at the limit when the bar's range "
    "reaches it (maker), and otherwise lapses (listed in refusals).",
    "pyramiding": "None: an entry while already on that side does nothing; an entry on the "
    "other side closes the position first.",
    "liquidation": "Not simulated; an entry must have its initial margin, and the run stops "
    "when equity reaches zero.",
}

_EIGHT = Decimal("0.00000001")


@dataclass(frozen=True)
class Costs:
    initial_balance: Decimal
    fees: FeeSchedule
    qty_step: Decimal = Decimal("0.001")
    min_qty: Decimal = Decimal("0.001")
    funding: tuple[tuple[int, Decimal], ...] = ()  # (funding time ms, rate)
    trade_from: int = 0  # ms: earlier bars only warm the indicators up (a drift report's)


@dataclass
class Fill:
    time: int
    price: Decimal
    qty: Decimal  # signed: + buy, − sell
    fee: Decimal
    reason: str  # the rule (line and text) or the stop that caused it


@dataclass
class Trade:
    side: str
    qty: Decimal
    entry_time: int
    entry_price: Decimal
    exit_time: int | None = None
    exit_price: Decimal | None = None
    pnl: Decimal = ZERO  # realized − fees − funding
    fills: list[Fill] = field(default_factory=list)
    entry_bar: int = 0
    exit_bar: int | None = None


@dataclass
class Refusal:
    time: int
    rule: str
    reason: str


@dataclass
class Outcome:
    trades: list[Trade]
    refusals: list[Refusal]
    equity: NDArray[np.float64]  # per bar, at its close
    exposure: NDArray[np.bool_]  # whether a position was open at the bar's close
    funding_paid: Decimal
    fees_paid: Decimal
    final_equity: Decimal


def _price(value: float) -> Decimal:
    return Decimal(repr(float(value)))


class _Book:
    """The simulated account: cash, one position, the open trade and the state timeline."""

    def __init__(self, program: ast.Program, bars: Bars, costs: Costs):
        self.program, self.bars, self.costs = program, bars, costs
        self.cash = costs.initial_balance
        self.qty = ZERO
        self.entry = ZERO
        self.trade: Trade | None = None
        self.trades: list[Trade] = []
        self.refusals: list[Refusal] = []
        self.fees = ZERO
        # (bar index, cash, qty, entry) from that bar's close on
        self.timeline: list[tuple[int, Decimal, Decimal, Decimal]] = []
        self.exit_bar: int | None = None  # where the open position's stop/target hits
        self.exit_price = ZERO
        self.exit_reason = ""
        # the open trade's own stop and target prices (a Python order's sl/tp), else the
        # program's percentages apply
        self.stop_price: float | None = None
        self.target_price: float | None = None

    def equity_at(self, bar: int) -> Decimal:
        return self.cash + self.qty * (_price(self.bars.close[bar]) - self.entry)

    def fill(
        self,
        bar: int,
        price: Decimal,
        qty: Decimal,
        reason: str,
        liquidity: Liquidity = Liquidity.TAKER,
    ) -> None:
        change = apply_fill(self.qty, self.entry, qty, price)
        fee = self.costs.fees.commission(abs(qty) * price, liquidity)
        self.cash += change.realized_pnl - fee
        self.fees += fee
        fill = Fill(int(self.bars.time[bar]), price, qty, fee, reason)
        if self.trade is None:
            side = "long" if qty > 0 else "short"
            self.trade = Trade(side, abs(qty), fill.time, price, entry_bar=bar)
            self.trades.append(self.trade)
        self.trade.fills.append(fill)
        self.trade.pnl += change.realized_pnl - fee
        self.qty, self.entry = change.qty_after, change.entry_after
        if self.qty == ZERO:
            self.trade.exit_time, self.trade.exit_price = fill.time, price
            self.trade.exit_bar = bar
            self.trade = None
        self.timeline.append((bar, self.cash, self.qty, self.entry))
        self.exit_bar = None
        if self.qty != ZERO:
            self._find_exit(bar)

    def close(self, bar: int, price: Decimal, reason: str) -> None:
        if self.qty != ZERO:
            self.fill(bar, price, -self.qty, reason)

    def open(
        self,
        decided: int,
        side: str,
        size: ast.Size,
        reason: str,
        limit: float | None = None,
        stop: float | None = None,
        target: float | None = None,
    ) -> None:
        bar = decided + 1
        price = _price(self.bars.open[bar])
        direction = 1 if side == "long" else -1
        if sign(self.qty) == direction:
            return  # no pyramiding
        liquidity = Liquidity.TAKER
        if limit is not None:
            through = (
                self.bars.open[bar] <= limit if direction > 0 else self.bars.open[bar] >= limit
            )
            reached = self.bars.low[bar] <= limit if direction > 0 else self.bars.high[bar] >= limit
            if not reached:
                when = int(self.bars.time[decided])
                self.refusals.append(Refusal(when, reason, f"limit {limit:g} not reached"))
                return
            if not through:
                price, liquidity = _price(limit), Liquidity.MAKER
        for level, name, below in ((stop, "stop-loss", True), (target, "take-profit", False)):
            if level is not None and (level >= float(price)) == (below == (direction > 0)):
                where = "below" if below == (direction > 0) else "above"
                self.refusals.append(
                    Refusal(
                        int(self.bars.time[decided]),
                        reason,
                        f"{name} {level:g} must be {where} the entry price {price}",
                    )
                )
                return
        if self.qty != ZERO:
            self.close(bar, price, reason)
        leverage = Decimal(self.program.leverage)
        equity = self.equity_at(decided)
        if size.unit == "%":
            notional = equity * Decimal(repr(size.amount)) / 100 * leverage
            qty = floor_to_step(notional / price, self.costs.qty_step)
        elif size.unit == "usdt":
            qty = floor_to_step(Decimal(repr(size.amount)) / price, self.costs.qty_step)
        else:
            qty = floor_to_step(Decimal(repr(size.amount)), self.costs.qty_step)
        if qty <= ZERO or qty < self.costs.min_qty:
            self.refusals.append(Refusal(int(self.bars.time[decided]), reason, "size too small"))
            return
        margin = qty * price / leverage + self.costs.fees.commission(qty * price, Liquidity.TAKER)
        if margin > self.cash:
            self.refusals.append(
                Refusal(int(self.bars.time[decided]), reason, "insufficient margin")
            )
            return
        self.stop_price, self.target_price = stop, target
        self.fill(bar, price, qty * direction, reason, liquidity)

    def _find_exit(self, start: int) -> None:
        """The first bar from `start` on where the open position's stop or target is hit."""
        program, bars = self.program, self.bars
        stop_pct = None if self.stop_price is not None else program.stop_loss_pct
        target_pct = None if self.target_price is not None else program.take_profit_pct
        own = self.stop_price is not None or self.target_price is not None
        if not (stop_pct or target_pct or program.trailing_stop_pct or own):
            return
        long = self.qty > 0
        entry = float(self.entry)
        span = 1024
        begin = start
        while begin < len(bars):
            end = min(len(bars), begin + span)
            low, high, opens = bars.low[begin:end], bars.high[begin:end], bars.open[begin:end]
            stop = np.full(end - begin, -np.inf if long else np.inf)
            if self.stop_price is not None:
                stop[:] = self.stop_price
            elif stop_pct:
                pct = stop_pct / 100
                stop[:] = entry * (1 - pct) if long else entry * (1 + pct)
            if program.trailing_stop_pct:
                pct = program.trailing_stop_pct / 100
                # the best price of the bars before each one (the fill bar's own open first)
                seen = bars.high[start:end] if long else bars.low[start:end]
                seen = np.concatenate(([float(bars.open[start])], seen[:-1]))
                best = np.maximum.accumulate(seen) if long else np.minimum.accumulate(seen)
                trail = best[begin - start :] * ((1 - pct) if long else (1 + pct))
                stop = np.maximum(stop, trail) if long else np.minimum(stop, trail)
            stopped = low <= stop if long else high >= stop
            target_price = self.target_price
            if target_price is None and target_pct:
                pct = target_pct / 100
                target_price = entry * (1 + pct) if long else entry * (1 - pct)
            if target_price is not None:
                hit_target = high >= target_price if long else low <= target_price
            else:
                hit_target = np.zeros(end - begin, dtype=bool)
            hits = np.flatnonzero(stopped | hit_target)
            if len(hits):
                i = int(hits[0])
                if stopped[i]:
                    level = stop[i]
                    gap = opens[i] <= level if long else opens[i] >= level
                    price, reason = (opens[i] if gap and begin + i != start else level), "stop"
                else:
                    assert target_price is not None
                    gap = opens[i] >= target_price if long else opens[i] <= target_price
                    price = opens[i] if gap and begin + i != start else target_price
                    reason = "take_profit"
                self.exit_bar = begin + i
                self.exit_price = _price(price).quantize(_EIGHT, rounding=ROUND_HALF_EVEN)
                self.exit_reason = reason
                return
            begin, span = end, span * 2

    def exit_before(self, bar: int) -> None:
        """Apply a stop or target hit on a bar up to `bar` (before the fill at its next open)."""
        while self.exit_bar is not None and self.exit_bar <= bar:
            self.close(self.exit_bar, self.exit_price, self.exit_reason)


def simulate(program: ast.Program, bars: Bars, costs: Costs) -> Outcome:
    masks = Evaluator(bars).rule_masks(program)
    fired = np.zeros(len(bars), dtype=bool)
    for mask in masks:
        fired |= mask
    fired[-1:] = False  # the last bar has no next open to fill at
    fired[bars.time < costs.trade_from] = False
    book = _Book(program, bars, costs)
    for t in np.flatnonzero(fired).tolist():
        book.exit_before(t)
        if book.equity_at(t) <= ZERO:
            break
        for rule, mask in zip(program.rules, masks, strict=True):
            if mask[t]:
                _act(book, t, rule)
    book.exit_before(len(bars) - 1)
    return _outcome(book, bars, costs)


PythonOrder = tuple[int, str, float, float | None, float | None, float | None]


def simulate_orders(
    program: ast.Program, bars: Bars, costs: Costs, orders: list[PythonOrder]
) -> Outcome:
    """The same book, driven by orders a Python strategy asked for: (bar, long|short|close,
    fraction of equity, sl, tp, limit), each filled at the next bar's open like a DSL rule's
    (a limit entry at its limit if the next bar reaches it)."""
    book = _Book(program, bars, costs)
    for bar, kind, fraction, stop, target, limit in orders:
        if not 0 <= bar < len(bars) - 1 or bars.time[bar] < costs.trade_from:
            continue  # the last bar has no next open to fill at; warm-up bars do not trade
        book.exit_before(bar)
        if book.equity_at(bar) <= ZERO:
            break
        reason = f"next() on bar {bar}"
        if kind == "close":
            book.close(bar + 1, _price(bars.open[bar + 1]), reason)
        else:
            book.open(bar, kind, ast.Size(fraction * 100, "%"), reason, limit, stop, target)
    book.exit_before(len(bars) - 1)
    return _outcome(book, bars, costs)


def _act(book: _Book, t: int, rule: ast.Rule) -> None:
    reason = f"line {rule.line}: {rule.text}"
    for action in rule.actions:
        if isinstance(action, ast.Entry):
            book.open(t, action.side, action.size or book.program.size, reason)
            continue
        if (action.which == "long" and book.qty <= 0) or (
            action.which == "short" and book.qty >= 0
        ):
            continue
        book.close(t + 1, _price(book.bars.open[t + 1]), reason)


def _outcome(book: _Book, bars: Bars, costs: Costs) -> Outcome:
    n = len(bars)
    starts = np.array([0] + [b for b, *_ in book.timeline], dtype=np.int64)
    cash = np.array([float(costs.initial_balance)] + [float(c) for _, c, _, _ in book.timeline])
    qty = np.array([0.0] + [float(q) for *_, q, _ in book.timeline])
    entry = np.array([0.0] + [float(e) for *_, e in book.timeline])
    # the state in force at each bar's close is the last one that began at or before it
    at = np.searchsorted(starts, np.arange(n), side="right") - 1
    equity = cash[at] + qty[at] * (bars.close - entry[at])
    credited = _credit_funding(book, bars, costs, starts, equity)
    final = book.equity_at(n - 1) + credited if n else costs.initial_balance
    return Outcome(book.trades, book.refusals, equity, qty[at] != 0, -credited, book.fees, final)


def _credit_funding(
    book: _Book, bars: Bars, costs: Costs, starts: NDArray[np.int64], equity: NDArray[np.float64]
) -> Decimal:
    """Funding on the position open at each funding time (the kernel's sign: what the wallet
    is credited, negative when paid), added to the equity curve from that bar on and to the
    trade it was paid on; returns the total credited."""
    total = ZERO
    if not costs.funding or len(bars) == 0:
        return total
    times = bars.time
    # The candles' period ends where the last bar does (one bar's length after its open): a
    # settlement at or after that end, the period's exclusive end included, is not the
    # backtest's to pay.
    end = int(times[-1]) + int(np.min(np.diff(times))) if len(bars) > 1 else int(times[-1]) + 1
    for funding_time, rate in costs.funding:
        bar = int(np.searchsorted(times, funding_time, side="right")) - 1
        if bar < 0 or funding_time >= end:
            continue
        state = int(np.searchsorted(starts, bar, side="right")) - 1
        if state == 0:
            continue
        _, _, qty, _ = book.timeline[state - 1]
        if qty == ZERO:
            continue
        payment = funding_payment(qty, _price(bars.close[bar]), rate)
        total += payment
        equity[bar:] += float(payment)
        for trade in book.trades:
            if trade.entry_bar <= bar and (trade.exit_bar is None or bar < trade.exit_bar):
                trade.pnl += payment
                break
    return total
