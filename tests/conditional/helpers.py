"""Helpers for conditional orders through /v1."""

import asyncio
from typing import Any

from tests.conftest import User


async def conditional(user: User, **body: Any) -> dict[str, Any]:
    response = await user.post("/v1/conditional-order", json=body)
    assert response.status_code == 201, response.text
    return dict(response.json())


async def wait_for_conditional(
    user: User, conditional_id: int, status: str, within: float = 5
) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        current = (await user.get(f"/v1/conditional-order/{conditional_id}")).json()
        if current["status"] == status:
            return dict(current)
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{conditional_id} stayed {current['status']}, wanted {status}")
        await asyncio.sleep(0.02)
