"""The time-weighted return (trading/returns.py, docs/trading.md "Returns"; issue 30 part 2) as
properties over random ledgers: top-ups, transfers in and out and profit shares are cash flows,
so without trading every return and drawdown is 0; with trading the return is the product of
the sub-period returns, split at each flow; a reset starts a new period."""

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from papertrade.trading.returns import (
    Flow,
    Mark,
    Record,
    max_drawdown,
    time_weighted,
    track_record,
    window_return_pct,
)

D = Decimal
START = D(10_000)
AMOUNT = st.decimals(min_value=D("0.000001"), max_value=D(200_000), places=6)
PNL = st.decimals(min_value=D(-3000), max_value=D(3000), places=6)
FLOW = st.sampled_from(["top_up", "transfer_in", "transfer_out", "profit_share_paid"])
NO_TRADES = st.lists(
    st.one_of(st.tuples(FLOW, AMOUNT), st.tuples(st.just("mark"), st.just(D(0)))), max_size=30
)
WITH_TRADES = st.lists(
    st.one_of(
        st.tuples(FLOW, AMOUNT),
        st.tuples(st.just("mark"), st.just(D(0))),
        st.tuples(st.just("open"), PNL),  # a position now shows this unrealized PnL
        st.tuples(st.just("trade"), PNL),  # it closes, with this PnL more (fees, a last move)
    ),
    max_size=30,
)


class Ledger:
    """A portfolio's balance as the ledger books it, its open position's unrealized PnL, its
    flows and its equity marks. The position's PnL is marked whenever it changes (the equity
    just before a flow is then known exactly: docs/trading.md, "Returns")."""

    def __init__(self) -> None:
        self.time = 1000
        self.balance = START
        self.held = D(0)  # unrealized PnL of the open position
        self.flows = [Flow(time=self.time, amount=START, balance_after=START)]  # the deposit
        self.marks: list[Mark] = []
        # The true figures, kept apart from the code under test: each sub-period's growth
        # (1 + its return) and the index at every observation.
        self.base = START
        self.growth: list[Decimal] = []
        self.index = [D(1)]

    def tick(self) -> int:
        self.time += 1000
        return self.time

    def equity(self) -> Decimal:
        return self.balance + self.held

    def flow(self, kind: str, amount: Decimal) -> None:
        if kind in ("transfer_out", "profit_share_paid"):
            # never more than is there, nor what an open loss holds: equity stays above 1
            amount = -max(D(0), min(amount, self.balance - D(1), self.equity() - D(1)))
            if amount == 0:
                return
        self.growth.append(self.equity() / self.base)  # just before this flow / after the last
        self.balance += amount
        self.base = self.equity()
        self.flows.append(Flow(time=self.tick(), amount=amount, balance_after=self.balance))
        self.index.append(self.product())

    def open(self, unrealized: Decimal) -> None:
        self.held = max(unrealized, -self.balance / 2)
        self.mark()

    def close(self, pnl: Decimal) -> None:
        """The position closes: its PnL and `pnl` more (fees, a last move) are realized."""
        self.balance = max(self.balance + self.held + pnl, self.balance / 2)
        self.held = D(0)
        self.mark()

    def mark(self) -> None:
        self.marks.append(Mark(time=self.tick(), equity=self.equity(), balance=self.balance))
        self.index.append(self.product() * self.equity() / self.base)

    def product(self) -> Decimal:
        growth = D(1)
        for g in self.growth:
            growth *= g
        return growth

    def record(self) -> Record:
        now = Mark(time=self.tick(), equity=self.equity(), balance=self.balance)
        self.index.append(self.product() * self.equity() / self.base)
        return track_record(self.flows, [*self.marks, now], start=1000)


def run(steps: list[tuple[str, Decimal]]) -> Ledger:
    ledger = Ledger()
    for kind, value in steps:
        if kind == "mark":
            ledger.mark()
        elif kind == "trade":
            ledger.close(value)
        elif kind == "open":
            ledger.open(value)
        else:
            ledger.flow(kind, value)
    return ledger


@settings(max_examples=300, deadline=None)
@given(steps=NO_TRADES)
def test_flows_without_trades_leave_every_return_and_drawdown_at_zero(
    steps: list[tuple[str, Decimal]],
) -> None:
    record = run(steps).record()
    assert record.return_pct == 0 and record.max_drawdown_pct == 0
    assert all(point.return_pct == 0 for point in record.points)
    assert window_return_pct(record, 1000) == 0


@settings(max_examples=300, deadline=None)
@given(steps=WITH_TRADES)
def test_with_trades_the_return_is_the_product_of_the_sub_period_returns(
    steps: list[tuple[str, Decimal]],
) -> None:
    ledger = run(steps)
    record = ledger.record()
    sub_periods = [*ledger.growth, ledger.equity() / ledger.base]  # the last one ends now
    expected = time_weighted(g - 1 for g in sub_periods) * 100
    close = D("1e-15")  # Decimal's 28 digits, rounded in another order
    assert abs(record.return_pct - expected) < close
    assert abs(record.max_drawdown_pct - max_drawdown(ledger.index) * 100) < close
    assert len(record.points) == len(ledger.index)
    assert all(abs(p.index - i) < close for p, i in zip(record.points, ledger.index, strict=True))


def test_a_deposit_is_not_a_return_the_issue_s_case() -> None:
    """5,000 that made 0.99 and was then topped up with 95,000: +0.0198 %, not +1899.98 %."""
    flows = [
        Flow(time=1, amount=D(5000), balance_after=D(5000)),
        Flow(time=3, amount=D(95_000), balance_after=D("100000.99")),
    ]
    marks = [
        Mark(time=2, equity=D("5000.99"), balance=D("5000.99")),
        Mark(time=4, equity=D("100000.99"), balance=D("100000.99")),
    ]
    record = track_record(flows, marks, start=1)
    assert record.return_pct == D("0.0198")
    # A 20 USDT transfer out is not a loss, nor a drawdown.
    out = [*flows, Flow(time=5, amount=D(-20), balance_after=D("99980.99"))]
    later = [*marks, Mark(time=6, equity=D("99980.99"), balance=D("99980.99"))]
    record = track_record(out, later, start=1)
    assert record.return_pct == D("0.0198") and record.max_drawdown_pct == 0


def test_a_loss_then_a_top_up_keeps_the_loss_and_its_drawdown() -> None:
    flows = [
        Flow(time=1, amount=D(1000), balance_after=D(1000)),
        Flow(time=3, amount=D(9000), balance_after=D(9900)),  # after losing 100: −10 %
    ]
    marks = [Mark(time=4, equity=D(10890), balance=D(10890))]  # then +10 % on 9,900
    record = track_record(flows, marks, start=1)
    assert record.return_pct == D(-1)  # 0.9 × 1.1 − 1
    assert record.max_drawdown_pct == D(10)


def test_an_open_position_counts_as_equity_at_a_flow() -> None:
    """Equity just before a flow: the balance then plus what positions held at the last mark."""
    flows = [
        Flow(time=1, amount=D(1000), balance_after=D(1000)),
        Flow(time=3, amount=D(1000), balance_after=D(2000)),
    ]
    marks = [
        Mark(time=2, equity=D(1100), balance=D(1000)),  # +100 unrealized
        Mark(time=4, equity=D(2100), balance=D(2000)),  # unchanged since
    ]
    record = track_record(flows, marks, start=1)
    assert record.return_pct == 10 and record.max_drawdown_pct == 0


def test_a_reset_starts_a_new_period_and_the_old_one_stays_readable() -> None:
    flows = [
        Flow(time=1, amount=D(1000), balance_after=D(1000)),
        Flow(time=3, amount=D(200), balance_after=D(1000), reset=True),  # back from 800
    ]
    marks = [
        Mark(time=2, equity=D(800), balance=D(800)),
        Mark(time=4, equity=D(1050), balance=D(1050)),
    ]
    record = track_record(flows, marks, start=1)
    assert record.period_start == 3
    assert record.return_pct == 5 and record.max_drawdown_pct == 0
    old = [p for p in record.points if p.period_start == 1]
    assert [p.return_pct for p in old] == [0, -20, -20]  # the deposit, the mark, the reset
    assert window_return_pct(record, 2) is None  # the period is younger than that window
