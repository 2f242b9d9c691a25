"""workingType through the Algo API: a CONTRACT_PRICE stop (our last price) triggers on the last
price while the mark has not crossed, and a MARK_PRICE stop waits for the mark."""

from collections.abc import AsyncIterator
from typing import Any

import pytest
from fastapi import FastAPI

from tests.conditional.helpers import set_mark_and_last, wait_for_conditional
from tests.conftest import User, client_for
from tests.fapi.helpers import Bot, make_bot
from tests.trading_api.helpers import positions, set_price


@pytest.fixture
async def bot(user: User, app: FastAPI) -> AsyncIterator[Bot]:
    async with client_for(app) as client:
        yield await make_bot(user, client)


def half_stop(working_type: str) -> dict[str, Any]:
    """Sells half the 0.01 BTC long when the watched price falls to 58,000."""
    return {
        "algoType": "CONDITIONAL",
        "symbol": "BTCUSDT",
        "side": "SELL",
        "type": "STOP_MARKET",
        "triggerPrice": "58000",
        "quantity": "0.005",
        "reduceOnly": "true",
        "workingType": working_type,
    }


async def test_a_contract_price_stop_triggers_on_the_last_price_before_the_mark(
    app: FastAPI, bot: Bot
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    entry = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"}
    await bot.ok("POST", "/v1/order", entry)
    on_last = await bot.ok("POST", "/v1/algoOrder", half_stop("CONTRACT_PRICE"))
    on_mark = await bot.ok("POST", "/v1/algoOrder", half_stop("MARK_PRICE"))
    assert (on_last["workingType"], on_mark["workingType"]) == ("CONTRACT_PRICE", "MARK_PRICE")

    await set_mark_and_last(app, "BTCUSDT", mark="59000", last="57900")  # a trade below 58,000
    await wait_for_conditional(bot.user, on_last["algoId"], "triggered")
    last_done = await bot.ok(
        "GET", "/v1/algoOrder", {"symbol": "BTCUSDT", "algoId": on_last["algoId"]}
    )
    assert last_done["algoStatus"] == "FINISHED" and last_done["actualOrderId"]
    waiting = await bot.ok("GET", "/v1/openAlgoOrders", {"symbol": "BTCUSDT"})
    assert [o["algoId"] for o in waiting] == [on_mark["algoId"]]  # the mark is still at 59,000
    held = await positions(bot.user, bot.portfolio_id)
    assert held["BTCUSDT"]["quantity"] == 0.005

    await set_price(app, "BTCUSDT", "57900")  # now the mark crosses too
    await wait_for_conditional(bot.user, on_mark["algoId"], "triggered")
    assert await positions(bot.user, bot.portfolio_id) == {}
