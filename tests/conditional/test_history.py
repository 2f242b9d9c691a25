"""Order history: every order, cancelled and expired ones with the reason, through /v1 and
/fapi/v1/allOrders; a conditional order whose order is refused when it triggers is kept as
rejected with the refusal."""

from fastapi import FastAPI

from tests.conditional.helpers import conditional, wait_for_conditional
from tests.conftest import User, client_for
from tests.fapi.helpers import make_bot
from tests.trading_api.helpers import limit, market, set_price


async def test_history_keeps_cancelled_and_expired_orders_with_the_reason(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    async with client_for(app) as client:
        bot = await make_bot(user, client)
        pid = bot.portfolio_id
        filled = await market(user, pid, "BTCUSDT", "buy", "0.01")
        resting = await limit(user, pid, "buy", "0.01", "50000")
        await user.delete(f"/v1/order/{resting['id']}")
        ioc = await limit(user, pid, "buy", "0.01", "50000", time_in_force="IOC")
        listed = await user.get("/v1/order", params={"portfolio_id": pid, "status": "all"})
        history = {o["id"]: o for o in listed.json()["orders"]}
        assert (
            history[filled["id"]]["status"] == "filled" and history[filled["id"]]["reason"] is None
        )
        assert history[resting["id"]]["status"] == "canceled"
        assert history[resting["id"]]["reason"] == "canceled by the user"
        assert history[ioc["id"]]["status"] == "expired"
        assert history[ioc["id"]]["reason"].startswith("IOC: the limit 50000")
        wire = await bot.ok("GET", "/v1/allOrders", {"symbol": "BTCUSDT"})
        assert [(o["orderId"], o["status"]) for o in wire] == [
            (filled["id"], "FILLED"),
            (resting["id"], "CANCELED"),
            (ioc["id"], "EXPIRED"),
        ]


async def test_a_triggered_order_that_is_refused_is_kept_as_rejected(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio(initial_balance="1000"))["id"]
    stop = await conditional(
        user,
        portfolio_id=pid,
        symbol="BTCUSDT",
        side="buy",
        type="stop_market",
        trigger_price="61000",
        quantity="1",  # 61,000 USDT at 20x needs 3,050 of margin: more than the 1,000 held
    )
    await set_price(app, "BTCUSDT", "61500")
    rejected = await wait_for_conditional(user, stop["id"], "rejected")
    assert "margin" in rejected["reason"].lower() and rejected["actual_order_id"] is None
