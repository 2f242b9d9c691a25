"""Helpers for driving the trading core through HTTP with a controllable simulated market."""

import asyncio
from decimal import Decimal
from typing import Any

from fastapi import FastAPI
from sqlalchemy import select

from papertrade.engine import risk
from papertrade.market.shared import SharedFeed
from papertrade.market.sim import SimFeed
from papertrade.models import Fill
from tests.conftest import User


def sim(app: FastAPI) -> SimFeed:
    """The app's simulation (in scale-out mode with Redis, the one behind its shared feed)."""
    feed = app.state.ctx.market
    if isinstance(feed, SharedFeed):
        feed = feed.upstream
    assert isinstance(feed, SimFeed)
    return feed


async def set_price(app: FastAPI, symbol: str, price: str) -> None:
    """Pin the simulated mark (the engine sees the tick before this returns).

    A scale-out follower (Redis) runs no simulation: there this waits until the price the engine
    leader pinned has arrived, so pin it on the leader first.
    """
    feed = app.state.ctx.market
    if isinstance(feed, SharedFeed) and not feed.leading:
        await wait_for_mark(feed, symbol, price)
        return
    await sim(app).set_price(symbol, Decimal(price))


async def wait_for_mark(feed: SharedFeed, symbol: str, price: str, within: float = 15) -> None:
    """Until the feed's mark of `symbol` is `price` (rounded to the tick)."""
    tick = feed.instruments()[symbol].tick_size
    wanted = (Decimal(price) / tick).to_integral_value() * tick
    deadline = asyncio.get_running_loop().time() + within
    while (quote := feed.quote(symbol)) is None or quote.mark_price != wanted:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{symbol} mark stayed {quote and quote.mark_price}, not {wanted}")
        await asyncio.sleep(0.01)


async def order(user: User, **body: Any) -> dict[str, Any]:
    response = await user.post("/v1/order", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def limit(
    user: User, portfolio_id: int, side: str, quantity: str, price: str, **extra: Any
) -> dict[str, Any]:
    """Place a BTCUSDT LIMIT order (GTC unless `extra` says otherwise); 201 expected."""
    body = {"symbol": "BTCUSDT", "side": side, "type": "limit", "quantity": quantity}
    return await order(user, portfolio_id=portfolio_id, price=price, **(body | extra))


async def market(
    user: User, portfolio_id: int, symbol: str, side: str, quantity: str, **extra: Any
) -> dict[str, Any]:
    """Place a MARKET order for `quantity` of `symbol`; 201 expected."""
    body = {"symbol": symbol, "side": side, "type": "market", "quantity": quantity}
    return await order(user, portfolio_id=portfolio_id, **(body | extra))


async def wait_for_status(
    user: User, order_id: int, status: str, within: float = 15
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        current = (await user.get(f"/v1/order/{order_id}")).json()
        if current["status"] == status:
            return dict(current)
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"order {order_id} stayed {current['status']}, wanted {status}")
        await asyncio.sleep(0.02)


async def positions(user: User, portfolio_id: int) -> dict[str, dict[str, Any]]:
    response = await user.get(f"/v1/portfolios/{portfolio_id}/positions")
    assert response.status_code == 200, response.text
    return {p["symbol"]: p for p in response.json()}


async def equity(user: User, portfolio_id: int) -> dict[str, Any]:
    response = await user.get(f"/v1/portfolios/{portfolio_id}/equity")
    assert response.status_code == 200, response.text
    return dict(response.json())


async def until_liquidated(app: FastAPI, portfolio_id: int, within: float = 30) -> None:
    """Until `portfolio_id` has a liquidation fill: the sweep is run here, and the engine's own
    sweep (every few seconds) may have been first on a loaded machine; either is the liquidation
    the test is after."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        if portfolio_id in await risk.liquidate_underwater(app.state.ctx):
            return
        async with app.state.ctx.db.reader() as session:
            found = await session.scalar(
                select(Fill.id).where(Fill.portfolio_id == portfolio_id, Fill.is_liquidation)
            )
        if found is not None:
            return
        assert asyncio.get_running_loop().time() < deadline, f"{portfolio_id} not liquidated"
        await asyncio.sleep(0.1)
