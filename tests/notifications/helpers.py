"""Waiting for the outbox consumer to fill an inbox."""

import asyncio
from typing import Any

from tests.conftest import User


async def inbox(user: User, **params: Any) -> dict[str, Any]:
    response = await user.get("/v1/inbox", params=params)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def wait_for_inbox(
    user: User, count: int, within: float = 30, **params: Any
) -> list[dict[str, Any]]:
    """The user's notifications once there are at least `count` (the consumer runs after the
    commit, in the background)."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        found: list[dict[str, Any]] = (await inbox(user, **params))["notifications"]
        if len(found) >= count:
            return found
        assert asyncio.get_running_loop().time() < deadline, f"inbox has {found}"
        await asyncio.sleep(0.05)
