"""A conditional order's life streams on the orders channel: waiting, triggered (with the order
it placed right after), cancelled."""

from fastapi import FastAPI

from tests.conditional.helpers import conditional
from tests.conftest import User
from tests.trading_api.helpers import set_price
from tests.ws.helpers import socket
from tests.ws.test_events import _events


async def test_conditional_events_stream_on_the_orders_channel(
    app: FastAPI, live_url: str, user: User
) -> None:
    pid = (await user.portfolio())["id"]
    await set_price(app, "SOLUSDT", "150")
    async with socket(live_url, await user.api_key()) as ws:
        await ws.subscribe(f"orders:{pid}")
        stop = await conditional(
            user,
            portfolio_id=pid,
            symbol="SOLUSDT",
            side="buy",
            type="stop_market",
            trigger_price="155",
            quantity="1",
        )
        [new] = await _events(ws, 1)
        assert (new["type"], new["data"]["id"], new["data"]["trigger_price"]) == (
            "conditional.new",
            stop["id"],
            155.0,
        )
        await set_price(app, "SOLUSDT", "156")
        placed, filled, triggered = await _events(ws, 3)
        assert (placed["type"], filled["type"]) == ("order.new", "order.filled")
        assert triggered["type"] == "conditional.triggered"
        assert triggered["data"]["actual_order_id"] == filled["data"]["id"]
