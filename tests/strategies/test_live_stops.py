"""Stops, targets and limit entries of deployed strategies: a DSL program's stop_loss /
take_profit and a Python strategy's buy(sl=, tp=, limit=) place the entry and attach TP/SL
through the conditional-order machinery; a limit entry lasts one bar."""

from decimal import Decimal
from typing import Any

from fastapi import FastAPI

from papertrade.context import AppContext
from papertrade.orders.pricing import Venue
from papertrade.strategies import live
from tests.conditional.helpers import wait_for_conditional
from tests.conftest import User
from tests.strategies.test_live import deploy, one_bar, rewind, signals
from tests.trading_api.helpers import positions, set_price

__all__ = ["one_bar"]  # the autouse fixture of test_live, for these tests too


async def conditionals(user: User, portfolio_id: int, status: str = "all") -> list[dict[str, Any]]:
    response = await user.get(
        "/v1/conditional-order", params={"portfolio_id": portfolio_id, "status": status}
    )
    assert response.status_code == 200, response.text
    return list(response.json()["conditional_orders"])


def mark(ctx: AppContext) -> Decimal:
    return Venue.of(ctx).quote("BTCUSDT").mark_price


async def test_a_dsl_stop_and_target_are_attached_to_the_live_entry(
    user: User, app: FastAPI
) -> None:
    ctx: AppContext = app.state.ctx
    portfolio = await user.portfolio()
    source = (
        "symbol BTCUSDT\ntimeframe 1m\nstop_loss 2%\ntake_profit 4%\n"
        "when close > 0 then buy 0.01 qty\n"
    )
    sid, did = await deploy(user, source, portfolio["id"])
    await live.evaluate_due(ctx)
    (signal,) = (await signals(user, sid))["signals"]
    assert signal["outcome"] == "executed", signal
    order = (await user.get(f"/v1/order/{signal['order_id']}")).json()
    assert order["status"] == "filled" and order["source"] == "strategy"
    entry = Decimal(str(order["avg_price"]))
    waiting = await conditionals(user, portfolio["id"], "open")
    by_type = {c["type"]: c for c in waiting}
    assert set(by_type) == {"stop_market", "take_profit_market"}, waiting
    for kind, pct in (("stop_market", Decimal("-0.02")), ("take_profit_market", Decimal("0.04"))):
        row = by_type[kind]
        assert row["close_position"] and row["side"] == "sell" and row["source"] == "strategy"
        assert row["working_price"] == "mark"
        # the percentage of the price the market entry filled at, on the tick
        assert abs(Decimal(str(row["trigger_price"])) - entry * (1 + pct)) <= Decimal("0.1")
    # the same price, however each side writes it ("58800" in the intent, 58800.0 in JSON)
    assert Decimal(signal["intent"]["sl"]) == Decimal(str(by_type["stop_market"]["trigger_price"]))
    # the same bar again: already long, nothing new (no second pair of exits)
    await rewind(ctx, did)
    await live.evaluate_due(ctx)
    assert len(await conditionals(user, portfolio["id"], "open")) == 2


async def test_a_dsl_trailing_stop_runs_live_and_closes_the_position(
    user: User, app: FastAPI
) -> None:
    ctx: AppContext = app.state.ctx
    portfolio = await user.portfolio()
    # A symbol of its own: the prices pinned here stay pinned for the tests after this one.
    await set_price(app, "BCHUSDT", "500")
    source = "symbol BCHUSDT\ntimeframe 1m\ntrailing_stop 2%\nwhen close > 0 then buy 0.1 qty\n"
    sid, _did = await deploy(user, source, portfolio["id"])
    await live.evaluate_due(ctx)
    (signal,) = (await signals(user, sid))["signals"]
    assert signal["outcome"] == "executed", signal["reason"]
    assert Decimal(signal["intent"]["trailing_stop_pct"]) == 2
    (trailing,) = await conditionals(user, portfolio["id"], "open")
    assert (trailing["type"], trailing["side"], trailing["callback_rate"]) == (
        "trailing_stop_market",
        "sell",
        2,
    )
    assert trailing["close_position"] and trailing["source"] == "strategy"
    await set_price(app, "BCHUSDT", "550")  # the best price rises: the stop follows to 539
    await set_price(app, "BCHUSDT", "540")  # not 2 % off the best yet
    assert (await positions(user, portfolio["id"]))["BCHUSDT"]["quantity"] == 0.1
    await set_price(app, "BCHUSDT", "538")  # 2.2 % under 550: it fires
    await wait_for_conditional(user, trailing["id"], "triggered")
    assert await positions(user, portfolio["id"]) == {}


PYTHON_LIMIT = """
class Strategy:
    symbol = "BTCUSDT"
    timeframe = "1m"

    def init(self, ctx):
        pass

    def next(self, ctx):
        price = ctx.bar.close
        ctx.buy(size=0.05, sl=price * 0.4, tp=price * 1.5, limit=price * 0.5)
"""


async def test_a_python_limit_entry_rests_one_bar_with_its_exits(user: User, app: FastAPI) -> None:
    ctx: AppContext = app.state.ctx
    portfolio = await user.portfolio()
    pid = portfolio["id"]
    sid, did = await deploy(user, PYTHON_LIMIT, pid, kind="python")
    await live.evaluate_due(ctx)
    (first,) = (await signals(user, sid))["signals"]
    assert first["outcome"] == "executed" and first["reason"] == "order new", first
    intent = first["intent"]
    assert intent["order_type"] == "limit" and Decimal(intent["price"]) > 0
    assert {"sl", "tp"} <= set(intent)
    resting = (await user.get(f"/v1/order/{first['order_id']}")).json()
    assert resting["type"] == "limit" and resting["status"] == "new"
    assert abs(Decimal(str(resting["price"])) - Decimal(intent["price"])) <= Decimal("0.1")
    exits = await conditionals(user, pid, "open")
    assert sorted(c["type"] for c in exits) == ["stop_market", "take_profit_market"]
    assert Decimal(intent["sl"]) == Decimal(
        str(next(c for c in exits if c["type"] == "stop_market")["trigger_price"])
    )
    # the next evaluation: the unfilled limit lapses (with its exits, no position came of
    # it) and the new bar's entry takes its place
    await rewind(ctx, did)
    await live.evaluate_due(ctx)
    lapsed = (await user.get(f"/v1/order/{first['order_id']}")).json()
    assert lapsed["status"] == "canceled"
    assert all(
        c["status"] == "canceled"
        for c in await conditionals(user, pid)
        if c["id"] in {e["id"] for e in exits}
    )
    second, _ = (await signals(user, sid))["signals"]
    assert second["outcome"] == "executed" and second["order_id"] != first["order_id"]
    assert len(await conditionals(user, pid, "open")) == 2


PYTHON_MARKET = """
class Strategy:
    symbol = "BTCUSDT"
    timeframe = "1m"

    def init(self, ctx):
        pass

    def next(self, ctx):
        ctx.buy(size=0.05, sl=ctx.bar.close * {sl}, tp=ctx.bar.close * 1.2)
"""


async def test_python_sl_tp_on_a_market_entry_and_a_wrong_side_stop_refused(
    user: User, app: FastAPI
) -> None:
    ctx: AppContext = app.state.ctx
    portfolio = await user.portfolio()
    sid, _ = await deploy(user, PYTHON_MARKET.format(sl=0.8), portfolio["id"], kind="python")
    await live.evaluate_due(ctx)
    (signal,) = (await signals(user, sid))["signals"]
    assert signal["outcome"] == "executed" and signal["reason"] == "order filled", signal["reason"]
    exits = {c["type"]: c for c in await conditionals(user, portfolio["id"], "open")}
    now = mark(ctx)
    assert Decimal(str(exits["stop_market"]["trigger_price"])) < now
    assert Decimal(str(exits["take_profit_market"]["trigger_price"])) > now
    # a stop above the price of a long would trigger at once: the entry is refused, not placed
    other = await user.portfolio()
    sid2, _ = await deploy(user, PYTHON_MARKET.format(sl=1.5), other["id"], kind="python")
    await live.evaluate_due(ctx)
    (refused,) = (await signals(user, sid2))["signals"]
    assert refused["outcome"] == "refused" and refused["order_id"] is None, refused
    assert await conditionals(user, other["id"]) == []
    positions = (await user.get(f"/v1/portfolios/{other['id']}/positions")).json()
    assert all(Decimal(str(p["quantity"])) == 0 for p in positions)


async def test_a_closing_rule_cancels_the_exits(user: User, app: FastAPI) -> None:
    ctx: AppContext = app.state.ctx
    portfolio = await user.portfolio()
    opening = "symbol BTCUSDT\ntimeframe 1m\nstop_loss 5%\nwhen close > 0 then buy 0.01 qty\n"
    sid, did = await deploy(user, opening, portfolio["id"])
    await live.evaluate_due(ctx)
    assert len(await conditionals(user, portfolio["id"], "open")) == 1
    await user.post(f"/v1/strategies/{sid}/deployments/{did}/stop")
    closing = "symbol BTCUSDT\ntimeframe 1m\nwhen close > 0 then close long\n"
    closer, _ = await deploy(user, closing, portfolio["id"])
    await live.evaluate_due(ctx)
    (closed,) = (await signals(user, closer))["signals"]
    assert closed["outcome"] == "executed", closed
    (stop,) = await conditionals(user, portfolio["id"])
    assert stop["status"] == "canceled" and "closed" in (stop["reason"] or "")


async def test_signals_name_their_version_and_a_private_history_is_the_owners(
    user: User, user_factory: Any, app: FastAPI, anon: Any
) -> None:
    ctx: AppContext = app.state.ctx
    portfolio = await user.portfolio()
    always = "symbol BTCUSDT\ntimeframe 1m\nwhen close > 0 then buy 0.01 qty\n"
    sid, did = await deploy(user, always, portfolio["id"])  # public, version 1
    await user.post(f"/v1/strategies/{sid}/deployments/{did}/stop")
    again = await user.post(f"/v1/strategies/{sid}/versions", json={"source": always + "# v2\n"})
    assert again.json()["number"] == 2
    second = await user.post(
        f"/v1/strategies/{sid}/deployments", json={"portfolio_id": portfolio["id"]}
    )
    assert second.json()["version"] == 2
    await live.evaluate_due(ctx)
    (signal,) = (await signals(anon, sid))["signals"]
    assert signal["version"] == 2 and signal["deployment_id"] == second.json()["id"]
    by_code = await anon.get(
        f"/v1/strategies/by_code/{(await user.get(f'/v1/strategies/{sid}')).json()['code']}"
    )
    assert by_code.status_code == 200
    # private: the history is its owner's alone
    assert (
        await user.patch(f"/v1/strategies/{sid}", json={"visibility": "private"})
    ).status_code == 200
    other: User = await user_factory()
    for stranger in (anon, other):
        hidden = await stranger.get(f"/v1/strategies/{sid}/signals")
        assert hidden.status_code == 404 and hidden.json()["error"] == "strategy_not_found"
    assert len((await signals(user, sid))["signals"]) == 1
