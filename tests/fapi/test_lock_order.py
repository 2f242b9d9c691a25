"""The engine and a bot at one portfolio at once: the engine filling a crossed LIMIT order, or
placing the order of a triggered stop, while the bot cancels all its open orders.

Every path that changes a portfolio's orders locks the portfolio first, then the orders. The
engine used to lock the crossed orders (or the triggered stops) first and then their portfolios,
so on PostgreSQL a bot cancelling its orders while the engine waited for another portfolio of
the same tick deadlocked with it: the cancel answered 500 (503 since), or the tick's whole batch
was rolled back and filled later, at another price."""

import asyncio
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from papertrade.db import Database
from papertrade.models import Portfolio
from tests.conftest import PG_URL, User
from tests.fapi.helpers import Bot, make_bot
from tests.pglocks import lock_waiters, until_waiting
from tests.trading_api.helpers import set_price, wait_for_status

SETUPS = {
    # what rests in each portfolio, and the price that reaches it
    "limit": ({"side": "BUY", "type": "LIMIT", "price": "49000", "timeInForce": "GTC"}, "48000"),
    "stop": ({"side": "SELL", "type": "STOP_MARKET", "stopPrice": "49000"}, "48000"),
}


@pytest.mark.skipif(PG_URL is None, reason="SQLite's writes take one lock: they cannot race")
@pytest.mark.parametrize("resting", list(SETUPS))
async def test_cancelling_all_while_the_engine_fills_the_same_tick(
    app: FastAPI, user_factory: Any, fapi_client: httpx.AsyncClient, resting: str
) -> None:
    user: User = await user_factory()
    await set_price(app, "BTCUSDT", "50000")
    # the lower id: the engine locks it first
    other = await make_bot(user, fapi_client, name="other")
    bot = await make_bot(user, fapi_client, name="bot")
    wanted, reaching = SETUPS[resting]
    placed = {}
    for each in (other, bot):
        if resting == "stop":  # a long for the stop to close
            await _order(each, {"side": "BUY", "type": "MARKET"})
        placed[each.portfolio_id] = await _order(each, wanted)
    db: Database = app.state.ctx.db
    async with db.sessions() as holding:  # another request on the other portfolio, say
        await holding.begin()
        await holding.execute(
            select(Portfolio.id).where(Portfolio.id == other.portfolio_id).with_for_update()
        )
        tick = asyncio.create_task(set_price(app, "BTCUSDT", reaching))  # waits for the engine
        await until_waiting(db)  # the engine, at the other portfolio
        cancelling = asyncio.create_task(
            bot.call("DELETE", "/v1/allOpenOrders", {"symbol": "BTCUSDT"})
        )
        await _done_or_waiting(db, cancelling)  # before: it waited for the order the engine held
        await holding.commit()
    cancelled = await asyncio.wait_for(cancelling, 30)
    assert cancelled.status_code == 200, cancelled.text
    await asyncio.wait_for(tick, 30)
    mine = await bot.ok("GET", "/v1/openOrders", {"symbol": "BTCUSDT"})
    assert mine == [] and await _open_algo(bot) == []  # cancelled, not filled
    if resting == "limit":
        await wait_for_status(user, placed[other.portfolio_id]["orderId"], "filled")
        kept = await wait_for_status(user, placed[bot.portfolio_id]["orderId"], "canceled")
        assert kept["filled_quantity"] == 0
    else:
        assert await _open_algo(other) == []  # its stop fired
        assert await _position(other) == "0.000" and await _position(bot) == "0.010"


async def _order(bot: Bot, params: dict[str, str]) -> dict[str, Any]:
    sent = {"symbol": "BTCUSDT", "quantity": "0.01", **params}
    return dict(await bot.ok("POST", "/v1/order", sent))


async def _open_algo(bot: Bot) -> list[Any]:
    return list(await bot.ok("GET", "/v1/openAlgoOrders", {"symbol": "BTCUSDT"}))


async def _position(bot: Bot) -> str:
    (row,) = await bot.ok("GET", "/v2/positionRisk", {"symbol": "BTCUSDT"})
    return str(row["positionAmt"])


async def _done_or_waiting(db: Database, request: "asyncio.Task[httpx.Response]") -> None:
    """Until the request has its answer, or waits on a lock beside the engine."""
    deadline = asyncio.get_running_loop().time() + 30
    while not request.done() and await lock_waiters(db) < 2:
        assert asyncio.get_running_loop().time() < deadline, "the cancel neither ended nor waited"
        await asyncio.sleep(0.02)
