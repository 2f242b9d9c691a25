"""Stop, take-profit and trailing stops through /v1: they wait, trigger on the watched price and
place a real order (actual_order_id), and are refused when they would trigger at once."""

from fastapi import FastAPI

from tests.conditional.helpers import conditional, wait_for_conditional
from tests.conftest import User
from tests.trading_api.helpers import market, positions, set_price


async def test_stop_market_waits_then_closes_the_long_at_market(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.01")
    stop = await conditional(
        user,
        portfolio_id=pid,
        symbol="BTCUSDT",
        side="sell",
        type="stop_market",
        trigger_price="58000",
        close_position=True,
    )
    assert stop["status"] == "new" and stop["actual_order_id"] is None
    await set_price(app, "BTCUSDT", "58500")  # not reached: still waiting
    assert (await user.get(f"/v1/conditional-order/{stop['id']}")).json()["status"] == "new"
    assert (await positions(user, pid))["BTCUSDT"]["quantity"] == 0.01
    await set_price(app, "BTCUSDT", "57900")
    done = await wait_for_conditional(user, stop["id"], "triggered")
    placed = (await user.get(f"/v1/order/{done['actual_order_id']}")).json()
    assert placed["status"] == "filled" and placed["side"] == "sell"
    assert placed["avg_price"] == 57900 and placed["action"] == "close"
    assert await positions(user, pid) == {}


async def test_take_profit_limit_places_a_resting_limit_order(user: User, app: FastAPI) -> None:
    await set_price(app, "ETHUSDT", "3000")
    pid = (await user.portfolio())["id"]
    tp = await conditional(
        user,
        portfolio_id=pid,
        symbol="ETHUSDT",
        side="buy",
        type="take_profit",
        trigger_price="2900",
        price="2850",
        quantity="1",
        working_price="mark",
    )
    await set_price(app, "ETHUSDT", "2890")
    done = await wait_for_conditional(user, tp["id"], "triggered")
    placed = (await user.get(f"/v1/order/{done['actual_order_id']}")).json()
    assert placed["type"] == "limit" and placed["price"] == 2850 and placed["status"] == "new"
    await set_price(app, "ETHUSDT", "2840")  # the placed limit order then fills as usual
    for _ in range(1500):
        placed = (await user.get(f"/v1/order/{done['actual_order_id']}")).json()
        if placed["status"] == "filled":
            break
        await __import__("asyncio").sleep(0.02)
    assert placed["status"] == "filled" and (await positions(user, pid))["ETHUSDT"]["quantity"] == 1


async def test_a_trigger_already_reached_is_refused(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    response = await user.post(
        "/v1/conditional-order",
        json={
            "portfolio_id": pid,
            "symbol": "BTCUSDT",
            "side": "buy",
            "type": "stop_market",
            "trigger_price": "59000",
            "quantity": "0.01",
        },
    )
    assert response.status_code == 400
    assert response.json()["error"] == "would_trigger_immediately"
    assert "59000" in response.json()["msg"]


async def test_cancel_stops_the_watch_and_history_keeps_it(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    stop = await conditional(
        user,
        portfolio_id=pid,
        symbol="BTCUSDT",
        side="buy",
        type="stop_market",
        trigger_price="61000",
        quantity="0.01",
    )
    canceled = await user.delete(f"/v1/conditional-order/{stop['id']}")
    assert canceled.status_code == 200 and canceled.json()["status"] == "canceled"
    again = await user.delete(f"/v1/conditional-order/{stop['id']}")
    assert again.status_code == 409 and again.json()["error"] == "conditional_not_open"
    await set_price(app, "BTCUSDT", "61500")
    assert await positions(user, pid) == {}
    listed = (await user.get("/v1/conditional-order", params={"portfolio_id": pid})).json()
    assert [(c["id"], c["status"]) for c in listed["conditional_orders"]] == [
        (stop["id"], "canceled")
    ]


async def test_trailing_stop_follows_the_high_and_triggers_on_the_pullback(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.01")
    trail = await conditional(
        user,
        portfolio_id=pid,
        symbol="BTCUSDT",
        side="sell",
        type="trailing_stop_market",
        callback_rate="1",
        close_position=True,
    )
    await set_price(app, "BTCUSDT", "62000")  # new high: the stop moves up to 61380
    await set_price(app, "BTCUSDT", "61500")  # above 61380: waits
    assert (await user.get(f"/v1/conditional-order/{trail['id']}")).json()["status"] == "new"
    await set_price(app, "BTCUSDT", "61300")
    done = await wait_for_conditional(user, trail["id"], "triggered")
    assert done["trigger_price"] == 61380
    assert await positions(user, pid) == {}


async def test_close_position_with_nothing_to_close_expires_with_the_reason(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    stop = await conditional(
        user,
        portfolio_id=pid,
        symbol="BTCUSDT",
        side="sell",
        type="stop_market",
        trigger_price="59000",
        close_position=True,
    )
    await set_price(app, "BTCUSDT", "58000")
    done = await wait_for_conditional(user, stop["id"], "expired")
    assert done["reason"] == "there was no position to close" and done["actual_order_id"] is None


async def test_a_reset_cancels_waiting_conditional_orders(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    stop = await conditional(
        user,
        portfolio_id=pid,
        symbol="BTCUSDT",
        side="buy",
        type="stop_market",
        trigger_price="61000",
        quantity="0.01",
    )
    reset = await user.post(f"/v1/portfolios/{pid}/reset", json={})
    assert reset.status_code == 200, reset.text
    after = (await user.get(f"/v1/conditional-order/{stop['id']}")).json()
    assert (after["status"], after["reason"]) == ("canceled", "the portfolio was reset")
    await set_price(app, "BTCUSDT", "61500")
    assert await positions(user, pid) == {}
