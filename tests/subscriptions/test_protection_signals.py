"""B4's `modify`, `tp_hit` and `sl_hit` signals: a followed portfolio's take-profit / stop-loss
set, replaced or removed (modify) and triggering (tp_hit, sl_hit) reach each subscriber who
asked for them, by their filters and tier; the automatic one-cancels-other is no signal."""

from decimal import Decimal
from typing import Any

from fastapi import FastAPI

from tests.conditional.helpers import wait_for_conditional
from tests.conftest import User
from tests.subscriptions.test_subscriptions import (
    fund_wallet,
    priced_portfolio,
    signals_for,
    subscribe,
)
from tests.trading_api.helpers import market, order, positions, set_price


def kinds(signals: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(s["event"], s.get("change", "")) for s in signals]


async def test_tpsl_changes_and_hits_reach_subscribers_by_their_filters(
    app: FastAPI, user_factory: Any
) -> None:
    owner: User = await user_factory()
    everything: User = await user_factory()
    hits_only: User = await user_factory()
    free_fan: User = await user_factory()
    portfolio = await priced_portfolio(owner, "1")
    pid = portfolio["id"]
    for fan in (everything, hits_only):
        await fund_wallet(fan, "1")
    await subscribe(everything, pid, tier="paid")
    await subscribe(hits_only, pid, tier="paid", events=["tp_hit", "sl_hit"], symbols=["ETHUSDT"])
    await subscribe(free_fan, pid)  # free: closed trades only

    # An entry with a stop-loss attached: an open, and a modify (the stop placed).
    await set_price(app, "BTCUSDT", "60000")
    entry = await order(
        owner,
        portfolio_id=pid,
        symbol="BTCUSDT",
        side="buy",
        type="market",
        quantity="0.01",
        stop_loss="57000",
    )
    (stop,) = entry["attached"]
    # Replace it with a take-profit and a tighter stop: the old stop cancelled, two placed.
    path = f"/v1/portfolios/{pid}/positions/BTCUSDT/tpsl"
    replaced = await owner.post(path, json={"take_profit": "63000", "stop_loss": "58000"})
    assert replaced.status_code == 200, replaced.text
    tp, sl = replaced.json()
    await set_price(app, "BTCUSDT", "63100")  # the take-profit closes; OCO cancels the stop
    await wait_for_conditional(owner, tp["id"], "triggered")
    await wait_for_conditional(owner, sl["id"], "canceled")
    assert await positions(owner, pid) == {}

    # An ETH short whose stop-loss is hit.
    await set_price(app, "ETHUSDT", "3000")
    await market(owner, pid, "ETHUSDT", "sell", "0.1")
    eth = await owner.post(
        f"/v1/portfolios/{pid}/positions/ETHUSDT/tpsl", json={"stop_loss": "3100"}
    )
    assert eth.status_code == 200, eth.text
    await set_price(app, "ETHUSDT", "3150")
    await wait_for_conditional(owner, eth.json()[0]["id"], "triggered")

    seen = await signals_for(app, everything.id, 12)
    assert kinds(seen) == [
        ("open", ""),
        ("modify", "placed"),  # the attached stop
        ("modify", "cancelled"),  # replaced…
        ("modify", "placed"),  # …by a take-profit
        ("modify", "placed"),  # and a stop
        ("close", ""),  # the take-profit's fill
        ("tp_hit", "triggered"),  # no signal for the stop cancelled by one-cancels-other
        ("open", ""),
        ("modify", "placed"),
        ("close", ""),
        ("sl_hit", "triggered"),
    ], seen
    hit = next(s for s in seen if s["event"] == "tp_hit")
    assert hit["signal_id"] == f"c{tp['id']}:triggered" and hit["symbol"] == "BTCUSDT"
    assert hit["conditional_type"] == "take_profit_market"
    assert Decimal(str(hit["trigger_price"])) == 63000 and hit["order_id"] is not None
    assert hit["close_position"] is True and hit["quantity"] is None
    removed = next(s for s in seen if s.get("change") == "cancelled")
    assert removed["signal_id"] == f"c{stop['id']}:cancelled"

    # Filters: only the hits, only ETHUSDT.
    only = await signals_for(app, hits_only.id, 1)
    assert kinds(only) == [("sl_hit", "triggered")]
    # The free tier: closed trades only, never the protection signals.
    free = await signals_for(app, free_fan.id, 2)
    assert kinds(free) == [("close", ""), ("close", "")]
