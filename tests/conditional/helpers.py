"""Helpers for conditional orders through /v1."""

import asyncio
from decimal import Decimal
from typing import Any

from fastapi import FastAPI

from tests.conftest import User
from tests.trading_api.helpers import sim


async def conditional(user: User, **body: Any) -> dict[str, Any]:
    response = await user.post("/v1/conditional-order", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def wait_for_conditional(
    user: User, conditional_id: int, status: str, within: float = 15
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        current = (await user.get(f"/v1/conditional-order/{conditional_id}")).json()
        if current["status"] == status:
            return dict(current)
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{conditional_id} stayed {current['status']}, wanted {status}")
        await asyncio.sleep(0.02)


async def set_mark_and_last(app: FastAPI, symbol: str, mark: str, last: str) -> None:
    """Pin the mark and, apart from it, the last traded price (a trade away from the mark): what
    watches one can then be told from what watches the other."""
    await sim(app).set_price(symbol, Decimal(mark), last=Decimal(last))
