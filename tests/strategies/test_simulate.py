"""The backtest simulation: fills at the next open through the kernel, fees, stops, funding,
metrics, and no look-ahead."""

from decimal import Decimal

import numpy as np

from papertrade.strategies.backtest import metrics
from papertrade.strategies.backtest.simulate import Costs, simulate, simulate_orders
from papertrade.strategies.bars import Bars
from papertrade.strategies.dsl.parse import parse
from papertrade.trading.fees import FeeSchedule

MINUTE = 60_000
NO_FEES = FeeSchedule(Decimal(0), Decimal(0))


def bars(opens: list[float], closes: list[float], *, spread: float = 0.0) -> Bars:
    o, c = np.array(opens, dtype=float), np.array(closes, dtype=float)
    return Bars(
        time=np.arange(len(o), dtype=np.int64) * MINUTE,
        open=o,
        high=np.maximum(o, c) + spread,
        low=np.minimum(o, c) - spread,
        close=c,
        volume=np.ones(len(o)),
    )


def test_a_signal_fills_at_the_next_open_and_pays_the_taker_fee() -> None:
    data = bars([100, 100, 110, 120, 130], [100, 105, 115, 125, 128])
    program = parse("when close > 104 and close < 106 then buy 2 qty\nwhen close > 124 then close")
    outcome = simulate(program, data, Costs(Decimal(10_000), FeeSchedule()))
    (trade,) = outcome.trades
    entry, exit_ = trade.fills
    # fired on bar 1's close (105), filled at bar 2's open (110); closed on bar 3 → bar 4's open
    assert (entry.time, entry.price, entry.qty) == (2 * MINUTE, Decimal("110.0"), Decimal(2))
    assert (exit_.time, exit_.price, exit_.qty) == (4 * MINUTE, Decimal("130.0"), Decimal(-2))
    assert entry.fee == Decimal("0.110") and exit_.fee == Decimal("0.130")
    assert trade.pnl == Decimal(40) - Decimal("0.24")
    assert outcome.final_equity == Decimal(10_000) + trade.pnl
    assert outcome.equity[-1] == float(outcome.final_equity)
    assert outcome.equity[2] == 10_000 - 0.11 + 2 * (115 - 110)  # marked at the close


def test_no_pyramiding_and_reversal_closes_first() -> None:
    data = bars([10] * 6, [10, 11, 12, 9, 9, 9])
    program = parse("when close > 10 then buy 1 qty\nwhen close < 10 then sell 1 qty")
    outcome = simulate(program, data, Costs(Decimal(1000), NO_FEES))
    long_trade, short_trade = outcome.trades
    assert [f.qty for f in long_trade.fills] == [Decimal(1), Decimal(-1)]  # second buy ignored
    assert short_trade.side == "short" and short_trade.exit_time is None


def test_percent_size_uses_equity_and_leverage() -> None:
    data = bars([100, 100, 100], [100, 101, 100])
    program = parse("leverage 2\nwhen close > 100 then buy 50%")
    outcome = simulate(program, data, Costs(Decimal(1000), NO_FEES, qty_step=Decimal("0.001")))
    assert outcome.trades[0].qty == Decimal(10)  # 1000 × 50 % × 2 / 100


def test_an_entry_without_margin_is_refused_with_the_reason() -> None:
    data = bars([100, 100, 100], [100, 101, 100])
    outcome = simulate(
        parse("when close > 100 then buy 50 qty"), data, Costs(Decimal(100), NO_FEES)
    )
    assert outcome.trades == []
    assert outcome.refusals[0].reason == "insufficient margin"


def test_stop_loss_fills_at_the_stop_or_the_gapped_open() -> None:
    data = bars([100, 100, 100, 99, 90, 90], [100, 101, 100, 98.5, 90, 90], spread=0.1)
    program = parse("stop_loss 1%\nwhen close > 100.5 then buy 1 qty")
    (trade,) = simulate(program, data, Costs(Decimal(1000), NO_FEES)).trades
    # entered at bar 2's open (100); bar 3 trades down to 98.4 ≤ 99 = the stop
    assert trade.fills[-1].price == Decimal(99) and trade.fills[-1].reason == "stop"
    gap = bars([100, 100, 100, 95, 95], [100, 101, 100, 95, 95])
    (gapped,) = simulate(program, gap, Costs(Decimal(1000), NO_FEES)).trades
    assert gapped.fills[-1].price == Decimal(95)  # opened below the stop


def test_take_profit_and_trailing_stop() -> None:
    data = bars([100, 100, 100, 103, 106], [100, 101, 103, 106, 106])
    target = parse("take_profit 4%\nwhen close > 100.5 and close < 102 then buy 1 qty")
    (trade,) = simulate(target, data, Costs(Decimal(1000), NO_FEES)).trades
    assert trade.fills[-1].price == Decimal(104) and trade.fills[-1].reason == "take_profit"
    rises = bars([100, 100, 100, 110, 108], [100, 101, 110, 109, 100])
    trailing = parse("trailing_stop 5%\nwhen close > 100.5 and close < 102 then buy 1 qty")
    (trailed,) = simulate(trailing, rises, Costs(Decimal(1000), NO_FEES)).trades
    # best price before bar 4 is bar 2's/3's high 110 → stop 104.5, hit by bar 4's low 100
    assert trailed.fills[-1].price == Decimal("104.5")


def test_funding_is_paid_by_the_open_position() -> None:
    data = bars([100] * 5, [100, 101, 100, 100, 100])
    funding = ((3 * MINUTE + 1, Decimal("0.001")),)
    costs = Costs(Decimal(1000), NO_FEES, funding=funding)
    outcome = simulate(parse("when close > 100 then buy 2 qty"), data, costs)
    assert outcome.funding_paid == Decimal("0.2")  # 2 × 100 × 0.1 %
    assert outcome.final_equity == Decimal("999.8")
    assert outcome.equity[3] == 999.8 and outcome.equity[2] == 1000.0


def test_no_look_ahead_the_future_does_not_change_the_past() -> None:
    rng = np.random.default_rng(3)
    closes = (100 + np.cumsum(rng.normal(0, 1, 3000))).tolist()
    opens = [closes[0], *closes[:-1]]
    program = parse(
        "when ema(12) crosses above ema(26) then buy 1 qty\n"
        "when ema(12) crosses below ema(26) then sell 1 qty"
    )
    full = simulate(program, bars(opens, closes), Costs(Decimal(10_000), FeeSchedule()))
    changed = closes[:2000] + [c * 3 for c in closes[2000:]]
    changed_opens = [changed[0], *changed[:-1]]
    altered = simulate(program, bars(changed_opens, changed), Costs(Decimal(10_000), FeeSchedule()))
    early = [(f.time, f.price) for t in full.trades for f in t.fills if f.time <= 2000 * MINUTE]
    same = [(f.time, f.price) for t in altered.trades for f in t.fills if f.time <= 2000 * MINUTE]
    assert early and early == same
    assert np.array_equal(full.equity[:2000], altered.equity[:2000])


def test_metrics_follow_the_definitions() -> None:
    day = 86_400_000
    equity = np.array([100.0, 110.0, 99.0, 120.0])
    times = np.arange(4, dtype=np.int64) * day
    returns = metrics.daily_returns(times, equity)
    assert np.allclose(returns, [0.1, -0.1, 120 / 99 - 1])
    assert np.allclose(metrics.drawdown(equity), [0, 0, 0.1, 0])


def ranged(rows: list[tuple[float, float, float, float]]) -> Bars:
    """Bars from (open, high, low, close) rows."""
    o, h, low, c = (np.array(col, dtype=float) for col in zip(*rows, strict=True))
    return Bars(
        time=np.arange(len(o), dtype=np.int64) * MINUTE,
        open=o,
        high=h,
        low=low,
        close=c,
        volume=np.ones(len(o)),
    )


FLAT = (100.0, 100.0, 100.0, 100.0)
MAKER_TAKER = FeeSchedule(Decimal("0.0002"), Decimal("0.0005"))


def test_a_python_limit_entry_fills_at_its_limit_as_maker_or_lapses() -> None:
    data = ranged([FLAT, FLAT, (100, 101, 97, 99), (99, 99, 99, 99)])
    program = parse("when close > 1000 then buy 1 qty")  # no rules fire: the orders drive it
    costs = Costs(Decimal(10_000), MAKER_TAKER)
    (trade,) = simulate_orders(program, data, costs, [(1, "long", 0.01, None, None, 98.0)]).trades
    entry = trade.fills[0]
    # asked on bar 1's close, bar 2 trades down to 97: filled at the limit 98, maker fee
    assert (entry.time, entry.price) == (2 * MINUTE, Decimal("98.0"))
    assert entry.fee == Decimal("0.0002") * entry.qty * Decimal("98.0")
    # a limit the next bar opens through fills at that open, as a taker
    (through,) = simulate_orders(
        program, data, costs, [(1, "long", 0.01, None, None, 100.5)]
    ).trades
    assert through.fills[0].price == Decimal("100.0")
    assert through.fills[0].fee == Decimal("0.0005") * through.fills[0].qty * Decimal(100)
    # not reached on the next bar: no trade (it lasts one bar)
    lapsed = simulate_orders(program, data, costs, [(1, "long", 0.01, None, None, 96.5)])
    assert lapsed.trades == [] and "not reached" in lapsed.refusals[0].reason


def test_python_sl_and_tp_prices_and_the_stop_first_when_a_bar_touches_both() -> None:
    program = parse("when close > 1000 then buy 1 qty")
    costs = Costs(Decimal(10_000), NO_FEES)
    wide = ranged([FLAT, FLAT, FLAT, (100, 106, 94, 100), FLAT])
    (both,) = simulate_orders(program, wide, costs, [(1, "long", 0.01, 95.0, 105.0, None)]).trades
    # bar 3 reaches both 94 ≤ 95 and 106 ≥ 105; which came first inside it is unknown:
    # the stop is assumed first (the pessimistic reading)
    assert both.fills[-1].price == Decimal(95) and both.fills[-1].reason == "stop"
    up = ranged([FLAT, FLAT, FLAT, (100, 106, 99, 105), FLAT])
    (target,) = simulate_orders(program, up, costs, [(1, "long", 0.01, 95.0, 105.0, None)]).trades
    assert target.fills[-1].price == Decimal(105) and target.fills[-1].reason == "take_profit"
    down = ranged([FLAT, FLAT, FLAT, (101, 102, 96, 97), (97, 97, 80, 80)])
    (short,) = simulate_orders(program, down, costs, [(1, "short", 0.01, 103.0, 90.0, None)]).trades
    assert short.side == "short" and short.fills[-1].price == Decimal(90)  # bar 4 reaches 80
    # a stop on the wrong side of the entry price is refused, like the live order would be
    wrong = simulate_orders(program, up, costs, [(1, "long", 0.01, 101.0, None, None)])
    assert wrong.trades == [] and "must be below" in wrong.refusals[0].reason


def test_funding_at_or_after_the_periods_exclusive_end_is_not_charged() -> None:
    # Five 1m bars: the period is [0, 5 min). A settlement at 5 min, the exclusive end, is the
    # next period's (it was charged to the last bar); one inside the last bar is charged.
    data = bars([100] * 5, [100, 101, 100, 100, 100])
    program = parse("when close > 100 then buy 2 qty")
    inside = (3 * MINUTE + 1, Decimal("0.001"))
    for late in (5 * MINUTE, 5 * MINUTE + 1, 8 * MINUTE):
        costs = Costs(Decimal(1000), NO_FEES, funding=(inside, (late, Decimal("0.001"))))
        outcome = simulate(program, data, costs)
        assert outcome.funding_paid == Decimal("0.2"), late  # the settlement inside only
        assert outcome.final_equity == Decimal("999.8"), late
