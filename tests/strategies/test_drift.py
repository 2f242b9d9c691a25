"""The drift report's bar-by-bar comparison: matched fills give slippage and latency, a refused
or missing live signal says why."""

from decimal import Decimal

from papertrade.models import Fill, StrategySignal
from papertrade.strategies.drift import _row

STEP = 60_000
BAR = 1_000 * STEP


def signal(outcome: str, reason: str = "", order_id: int | None = None) -> StrategySignal:
    return StrategySignal(bar_time=BAR, outcome=outcome, reason=reason, order_id=order_id, rule="r")


def planned(price: str, qty: str) -> dict[str, str | int]:
    return {"time": BAR + STEP, "price": price, "qty": qty, "reason": "line 1: r"}


def test_matched_fills_give_slippage_and_latency() -> None:
    fill = Fill(order_id=7, price=Decimal("101.5"), quantity=Decimal(1), side="buy")
    fill.created_at = BAR + STEP + 850
    row = _row(BAR, STEP, [planned("100.0", "1")], [signal("executed", order_id=7)], {7: [fill]})
    assert row["explanation"].startswith("both traded")
    assert row["slippage"] == ["1.5"]  # the buy paid 1.5 more live
    assert row["latency_ms"] == [850]


def test_a_sell_that_got_less_live_is_positive_slippage() -> None:
    fill = Fill(order_id=8, price=Decimal(99), quantity=Decimal(1), side="sell")
    fill.created_at = BAR + STEP
    row = _row(BAR, STEP, [planned("100.0", "-1")], [signal("executed", order_id=8)], {8: [fill]})
    assert row["slippage"] == ["1.0"]


def test_refusals_and_missing_bars_are_explained() -> None:
    refused = _row(
        BAR, STEP, [planned("100.0", "1")], [signal("refused", "insufficient margin")], {}
    )
    assert refused["explanation"] == "refused live: insufficient margin"
    missing = _row(BAR, STEP, [planned("100.0", "1")], [], {})
    assert missing["explanation"].startswith("live did not evaluate this bar")
    skipped = _row(BAR, STEP, [planned("100.0", "1")], [signal("skipped", "already long")], {})
    assert skipped["explanation"] == "live did nothing: already long"
