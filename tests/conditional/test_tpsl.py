"""TP/SL attached to an entry, or set on an open position; whichever closes the position
cancels the other (one-cancels-other)."""

from fastapi import FastAPI

from tests.conditional.helpers import wait_for_conditional
from tests.conftest import User
from tests.trading_api.helpers import order, positions, set_price


async def test_entry_with_tp_and_sl_then_the_sl_closes_and_cancels_the_tp(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    entry = await order(
        user,
        portfolio_id=pid,
        symbol="BTCUSDT",
        side="buy",
        type="market",
        quantity="0.01",
        take_profit="66000",
        stop_loss="57000",
    )
    tp, sl = entry["attached"]
    assert (tp["type"], tp["side"], tp["trigger_price"]) == ("take_profit_market", "sell", 66000)
    assert (sl["type"], sl["side"], sl["trigger_price"]) == ("stop_market", "sell", 57000)
    assert tp["close_position"] and sl["close_position"]
    await set_price(app, "BTCUSDT", "56900")
    await wait_for_conditional(user, sl["id"], "triggered")
    assert await positions(user, pid) == {}
    canceled = await wait_for_conditional(user, tp["id"], "canceled")
    assert "one-cancels-other" in canceled["reason"]


async def test_attached_sl_on_the_wrong_side_refuses_the_entry(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    response = await user.post(
        "/v1/order",
        json={
            "portfolio_id": pid,
            "symbol": "BTCUSDT",
            "side": "buy",
            "type": "market",
            "quantity": "0.01",
            "stop_loss": "61000",
        },
    )
    assert response.status_code == 400 and response.json()["error"] == "would_trigger_immediately"
    assert await positions(user, pid) == {}  # nothing was bought


async def test_set_replace_and_remove_tpsl_on_a_position(user: User, app: FastAPI) -> None:
    await set_price(app, "ETHUSDT", "3000")
    pid = (await user.portfolio())["id"]
    path = f"/v1/portfolios/{pid}/positions/ETHUSDT/tpsl"
    none = await user.post(path, json={"stop_loss": "3100"})
    assert none.status_code == 400 and none.json()["error"] == "reduce_only_rejected"
    await order(user, portfolio_id=pid, symbol="ETHUSDT", side="sell", type="market", quantity="1")
    first = await user.post(path, json={"take_profit": "2800", "stop_loss": "3100"})
    assert first.status_code == 200, first.text
    assert [(c["type"], c["side"]) for c in first.json()] == [
        ("take_profit_market", "buy"),
        ("stop_market", "buy"),
    ]
    second = await user.post(path, json={"stop_loss": "3200"})
    assert [c["trigger_price"] for c in second.json()] == [3200]
    waiting = await user.get(
        "/v1/conditional-order", params={"portfolio_id": pid, "status": "open"}
    )
    assert [c["trigger_price"] for c in waiting.json()["conditional_orders"]] == [3200]
    await set_price(app, "ETHUSDT", "2700")  # the replaced take-profit does nothing
    assert (await positions(user, pid))["ETHUSDT"]["quantity"] == -1
    removed = await user.post(path, json={})
    assert removed.status_code == 200 and removed.json() == []
    waiting = await user.get(
        "/v1/conditional-order", params={"portfolio_id": pid, "status": "open"}
    )
    assert waiting.json()["conditional_orders"] == []


async def test_hedge_mode_protects_each_side_of_a_symbol_apart(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    mode = await user.client.put(
        f"/v1/portfolios/{pid}/position-mode", json={"hedge": True}, headers=user.write_headers()
    )
    assert mode.status_code == 200, mode.text
    for side, position_side in (("buy", "LONG"), ("sell", "SHORT")):
        await order(
            user,
            portfolio_id=pid,
            symbol="BTCUSDT",
            side=side,
            type="market",
            quantity="0.01",
            position_side=position_side,
        )
    path = f"/v1/portfolios/{pid}/positions/BTCUSDT/tpsl"
    unnamed = await user.post(path, json={"stop_loss": "57000"})
    assert unnamed.status_code == 400, unnamed.text
    assert unnamed.json()["error"] == "position_side_mismatch"
    assert "name the position side" in unnamed.json()["msg"]
    long = await user.post(path, json={"stop_loss": "57000", "position_side": "LONG"})
    assert [(c["side"], c["position_side"]) for c in long.json()] == [("sell", "LONG")]
    short = await user.post(
        path, json={"take_profit": "55000", "stop_loss": "63000", "position_side": "SHORT"}
    )
    assert [(c["side"], c["position_side"]) for c in short.json()] == [
        ("buy", "SHORT"),
        ("buy", "SHORT"),
    ]
    waiting = await user.get(
        "/v1/conditional-order", params={"portfolio_id": pid, "status": "open"}
    )
    assert len(waiting.json()["conditional_orders"]) == 3  # setting SHORT's kept LONG's stop
    await set_price(app, "BTCUSDT", "56900")  # LONG's stop fires; SHORT's exits stay
    await wait_for_conditional(user, long.json()[0]["id"], "triggered")
    assert list(await positions(user, pid)) == ["BTCUSDT"]  # the SHORT one
    await set_price(app, "BTCUSDT", "54900")  # SHORT's take-profit; its stop is cancelled
    await wait_for_conditional(user, short.json()[0]["id"], "triggered")
    canceled = await wait_for_conditional(user, short.json()[1]["id"], "canceled")
    assert "one-cancels-other" in canceled["reason"]
    assert await positions(user, pid) == {}
