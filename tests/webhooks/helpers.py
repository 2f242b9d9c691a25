"""Driving the alert webhook the way TradingView does: one POST, the message as the body."""

from typing import Any

import httpx
from fastapi import FastAPI

from tests.conftest import User, client_for
from tests.trading_api.helpers import positions


class Hook:
    """A portfolio with a webhook token, and a sender that has nothing but the URL."""

    def __init__(self, app: FastAPI, user: User, portfolio_id: int, token: str):
        self.app = app
        self.user = user
        self.portfolio_id = portfolio_id
        self.token = token

    @classmethod
    async def create(cls, app: FastAPI, user: User, **portfolio: Any) -> "Hook":
        pid = (await user.portfolio(**portfolio))["id"]
        return cls(app, user, pid, await user.webhook_token(pid))

    async def send(
        self, body: str | bytes | dict[str, Any], path: str = "/webhook/tv"
    ) -> httpx.Response:
        async with client_for(self.app) as sender:
            if isinstance(body, dict):
                return await sender.post(f"{path}/{self.token}", json=body)
            content = body.encode() if isinstance(body, str) else body
            return await sender.post(
                f"{path}/{self.token}", content=content, headers={"Content-Type": "text/plain"}
            )

    async def ok(self, body: str | bytes | dict[str, Any]) -> dict[str, Any]:
        response = await self.send(body)
        assert response.status_code == 200, response.text
        return dict(response.json())

    async def refused(self, body: str | bytes | dict[str, Any], status: int) -> dict[str, Any]:
        response = await self.send(body)
        assert response.status_code == status, response.text
        found = dict(response.json())
        assert set(found) == {"error", "msg"} and found["msg"], found
        return found

    async def position(self, symbol: str) -> float:
        held = await positions(self.user, self.portfolio_id)
        return float(held[symbol]["quantity"]) if symbol in held else 0.0

    async def signals(self) -> list[dict[str, Any]]:
        response = await self.user.get(f"/v1/portfolios/{self.portfolio_id}/signals")
        assert response.status_code == 200, response.text
        return list(response.json()["signals"])
