"""A TradingView alert's `sl` places a stop-loss on the exchange that closes the position; with
`tp` the two are one-cancels-other: whichever closes the position cancels what is left."""

from fastapi import FastAPI

from tests.conditional.helpers import wait_for_conditional
from tests.conftest import User
from tests.trading_api.helpers import set_price
from tests.webhooks.helpers import Hook


async def _stops(user: User, pid: int, status: str = "all") -> list[dict[str, object]]:
    listed = await user.get("/v1/conditional-order", params={"portfolio_id": pid, "status": status})
    assert listed.status_code == 200, listed.text
    return list(listed.json()["conditional_orders"])


async def test_sl_closes_the_position_when_the_price_falls(app: FastAPI, user: User) -> None:
    await set_price(app, "BTCUSDT", "50000")
    hook = await Hook.create(app, user)
    answer = await hook.ok("buy BTCUSDT 0.01 sl=48000")
    assert "stop-loss 48000 placed" in answer["msg"]
    [stop] = await _stops(user, hook.portfolio_id)
    assert (stop["type"], stop["side"], stop["trigger_price"], stop["close_position"]) == (
        "stop_market",
        "sell",
        48000,
        True,
    )
    await set_price(app, "BTCUSDT", "47990")
    await wait_for_conditional(user, int(str(stop["id"])), "triggered")
    assert await hook.position("BTCUSDT") == 0.0


async def test_tp_filling_cancels_the_sl(app: FastAPI, user: User) -> None:
    await set_price(app, "BTCUSDT", "50000")
    hook = await Hook.create(app, user)
    await hook.ok({"action": "sell", "symbol": "BTCUSDT", "qty": 0.01, "tp": 49000, "sl": 51000})
    [stop] = await _stops(user, hook.portfolio_id, "open")
    assert stop["side"] == "buy" and stop["trigger_price"] == 51000
    await set_price(app, "BTCUSDT", "48900")  # the take-profit limit fills: position closed
    await wait_for_conditional(user, int(str(stop["id"])), "canceled")
    assert await hook.position("BTCUSDT") == 0.0
    await set_price(app, "BTCUSDT", "51500")  # the cancelled stop never reopens anything
    assert await hook.position("BTCUSDT") == 0.0


async def test_a_close_alert_cancels_the_waiting_sl(app: FastAPI, user: User) -> None:
    await set_price(app, "BTCUSDT", "50000")
    hook = await Hook.create(app, user)
    await hook.ok("buy BTCUSDT 0.01 sl=48000")
    answer = await hook.ok("close BTCUSDT")
    assert "cancelled 1 waiting stop/take-profit order(s)" in answer["msg"]
    [stop] = await _stops(user, hook.portfolio_id)
    assert stop["status"] == "canceled"
