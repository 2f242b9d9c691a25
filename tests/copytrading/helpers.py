"""Helpers for copy-trading tests: a public leader, a follower, and waiting for the mirror."""

import asyncio
from decimal import Decimal
from typing import Any

from tests.conftest import User


async def leader_and_follower(
    leader: User, follower: User, balance: str = "10000"
) -> tuple[dict[str, Any], dict[str, Any]]:
    led = await leader.portfolio(name="lead", visibility="public", initial_balance=balance)
    mine = await follower.portfolio(name="copies", initial_balance=balance)
    return led, mine


async def follow(
    follower: User, leader_portfolio: int, portfolio: int, **body: Any
) -> dict[str, Any]:
    payload = {"leader_portfolio_id": leader_portfolio, "portfolio_id": portfolio, **body}
    response = await follower.post("/v1/copy/relations", json=payload)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def trades(user: User, relation_id: int, count: int, within: float = 30) -> list[Any]:
    """The relation's copy trades once there are at least `count`, oldest first."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        response = await user.get(f"/v1/copy/relations/{relation_id}/trades")
        assert response.status_code == 200, response.text
        rows = list(reversed(response.json()))
        if len(rows) >= count:
            return rows
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"relation {relation_id} has {len(rows)} copy trades, not {count}")
        await asyncio.sleep(0.05)


async def position_qty(user: User, portfolio_id: int, symbol: str) -> Decimal:
    response = await user.get(f"/v1/portfolios/{portfolio_id}/positions")
    assert response.status_code == 200, response.text
    for row in response.json():
        if row["symbol"] == symbol:
            return Decimal(str(row["quantity"]))
    return Decimal(0)


async def portfolio_balance(user: User, portfolio_id: int) -> Decimal:
    body = (await user.get(f"/v1/portfolios/{portfolio_id}")).json()
    return Decimal(str(body["balance"]))
