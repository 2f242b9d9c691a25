"""Time-weighted return and drawdown of a portfolio's track record (docs/trading.md, "Returns").

Money that comes in or goes out is not a gain or a loss: a top-up, a transfer, a reset and a
profit share are **cash flows** (`FLOW_KINDS`, ledger rows). The record is split at each flow
into sub-periods; a sub-period's return is the equity just before the next flow over the equity
just after the previous one, minus 1, and the return of a track-record period is the product of
(1 + sub-period return) minus 1. A flow therefore moves nothing: 10,000 that made 100 and was
then topped up with 95,000 shows +1 %, not +951 %.

The **index** is that product so far: the value of 1 USDT put in at the start of the period,
marked at each equity mark, each flow and now. Drawdown is the largest fall of the index from
its peak (the period starts at a peak of 1, so a loss is drawdown as soon as it is return): a
deposit cannot hide a loss and a withdrawal cannot make one.

A **reset** starts a new period: the index restarts at 1 and the figures (`return_pct`,
`max_drawdown_pct`) are the current period's; the points of older periods keep their own index.

Equity is known exactly at each mark (the periodic equity snapshots, the marks taken as a top-up
or a reset is booked, and now). Just before a flow it is the balance just before it (exact, from
the ledger row) plus what the open positions held (isolated margin and unrealized PnL) at the
latest mark before it: exact with no position open or a mark taken at the flow; otherwise what
the positions gained or lost since that mark counts in the next sub-period instead of this one.

Pure (Decimal, no I/O): every surface (the portfolio's equity read, its equity curve, the
Square, the public page, the leader statistics) computes its figures here, so they agree.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from papertrade.trading.enums import LedgerKind

ZERO = Decimal(0)
ONE = Decimal(1)
HUNDRED = Decimal(100)

# Ledger kinds that move money into or out of a portfolio without trading.
FLOW_KINDS = frozenset(
    {
        LedgerKind.DEPOSIT,  # the starting balance, when the portfolio is made
        LedgerKind.TOP_UP,
        LedgerKind.RESET,  # starts a new track-record period as well
        LedgerKind.WALLET_TRANSFER,  # in from (or, in older ledgers, out to) the owner's wallet
        LedgerKind.PROFIT_SHARE,  # copy trading's revenue share, paid or received
    }
)


@dataclass(frozen=True, slots=True)
class Flow:
    """A cash flow: a ledger row of one of FLOW_KINDS."""

    time: int
    amount: Decimal  # signed, as booked
    balance_after: Decimal  # the portfolio's balance just after it (the row's balance_after)
    reset: bool = False


@dataclass(frozen=True, slots=True)
class Mark:
    """Equity measured at the marks of the time: an equity snapshot, or the equity now."""

    time: int
    equity: Decimal
    balance: Decimal  # the balance then (equity minus isolated margin and unrealized PnL)


@dataclass(frozen=True, slots=True)
class Point:
    time: int
    index: Decimal  # 1 USDT at the start of the point's period is worth this here
    period_start: int
    mark: Mark | None = None  # the equity mark measured here; None at a flow

    @property
    def return_pct(self) -> Decimal:
        """The time-weighted return from the start of the point's period to it, percent."""
        return (self.index - ONE) * HUNDRED


@dataclass(frozen=True, slots=True)
class Record:
    period_start: int  # when the current period began: the latest reset, else the start
    return_pct: Decimal  # time-weighted return of the current period, percent
    max_drawdown_pct: Decimal  # largest fall of the current period's index from its peak, %
    points: tuple[Point, ...]  # every period's points, oldest first

    def current(self) -> tuple[Point, ...]:
        return tuple(p for p in self.points if p.period_start == self.period_start)


def time_weighted(sub_period_returns: Iterable[Decimal]) -> Decimal:
    """The return of a period from its sub-periods' returns (fractions): ∏(1 + r) − 1."""
    growth = ONE
    for r in sub_period_returns:
        growth *= ONE + r
    return growth - ONE


def max_drawdown(index: Iterable[Decimal], peak: Decimal = ONE) -> Decimal:
    """Largest peak-to-trough fall of a curve, as a fraction of the peak (0 when it never falls).
    The curve starts at `peak` (an index starts at 1)."""
    worst = ZERO
    for value in index:
        peak = max(peak, value)
        if peak > ZERO:
            worst = max(worst, (peak - value) / peak)
    return worst


def track_record(flows: Sequence[Flow], marks: Sequence[Mark], *, start: int) -> Record:
    """The index at each mark and flow from `start` (the portfolio's creation) on, and the current
    period's return and drawdown. `marks` should end with the equity now. A flow and a mark at
    the same millisecond: the flow first. Marks before `start` are ignored."""
    # At the same millisecond a mark comes after the flows when it holds the balance one of them
    # left (a periodic mark just after it), else before them (the mark taken as the flow was
    # booked, mark_before_flow).
    after = {(f.time, f.balance_after) for f in flows}
    events: list[tuple[int, int, Flow | Mark]] = [(f.time, 0, f) for f in flows]
    events += [
        (m.time, 1 if (m.time, m.balance) in after else -1, m) for m in marks if m.time >= start
    ]
    events.sort(key=lambda e: (e[0], e[1]))

    period_start = start
    points: list[Point] = []
    index = ONE  # the index at the start of the current sub-period
    base = ZERO  # the equity just after the previous flow (0: nothing to measure yet)
    held = ZERO  # equity beyond the balance (isolated margin, unrealized PnL) at the last mark
    for time, _, event in events:
        if isinstance(event, Flow):
            before = event.balance_after - event.amount + held
            if base > ZERO:
                index *= before / base
            if event.reset:  # the old period ends here; positions dropped, the balance restored
                points.append(Point(time, index, period_start))
                period_start, index, held = time, ONE, ZERO
                base = event.balance_after
            else:
                base = before + event.amount
        else:
            held = event.equity - event.balance
            grown = index * event.equity / base if base > ZERO else index
            points.append(Point(time, grown, period_start, event))
            continue
        points.append(Point(time, index, period_start))

    current = [p for p in points if p.period_start == period_start]
    return Record(
        period_start=period_start,
        return_pct=current[-1].return_pct if current else ZERO,
        max_drawdown_pct=max_drawdown(p.index for p in current) * HUNDRED,
        points=tuple(points),
    )


def window_return_pct(record: Record, since: int) -> Decimal | None:
    """The time-weighted return from the first point at or after `since` to the last, percent;
    None when the current period began after `since` or has no point before `since` (its record
    does not cover the whole window)."""
    current = record.current()
    if record.period_start > since or not current or current[0].time > since:
        return None
    first = next((p for p in current if p.time >= since), None)
    if first is None or first.index <= ZERO:
        return None
    return (current[-1].index / first.index - ONE) * HUNDRED
