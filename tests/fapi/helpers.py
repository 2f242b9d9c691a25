"""Signing like the real clients do, and a bot fixture: a portfolio with a compat key pair."""

import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from tests.conftest import User


def signature(secret: str, message: str) -> str:
    return hmac.new(secret.encode(), message.encode(), hashlib.sha256).hexdigest()


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Bot:
    """A user's portfolio driven through /fapi with its compat key pair."""

    user: User
    client: httpx.AsyncClient
    portfolio_id: int
    api_key: str
    api_secret: str

    async def call(
        self,
        method: str,
        path: str,
        params: dict[str, Any] | None = None,
        *,
        in_body: bool = False,
        timestamp: int | None = None,
        headers: dict[str, str] | None = None,
        secret: str | None = None,
        prefix: str = "/fapi",
    ) -> httpx.Response:
        """A signed request: params (plus timestamp) in the query string or a form body."""
        items = dict(params or {})
        items.setdefault("timestamp", timestamp if timestamp is not None else now_ms())
        encoded = urlencode(items)
        signed = f"{encoded}&signature={signature(secret or self.api_secret, encoded)}"
        sent = {"X-MBX-APIKEY": self.api_key, **(headers or {})}
        if in_body:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
            return await self.client.request(
                method, prefix + path, content=signed.encode(), headers=sent
            )
        return await self.client.request(method, f"{prefix}{path}?{signed}", headers=sent)

    async def ok(
        self, method: str, path: str, params: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        response = await self.call(method, path, params, **kwargs)
        assert response.status_code == 200, response.text
        return response.json()

    async def error(
        self, method: str, path: str, params: dict[str, Any] | None = None, **kwargs: Any
    ) -> tuple[int, int, str]:
        response = await self.call(method, path, params, **kwargs)
        body = response.json()
        assert set(body) == {"code", "msg"}, body
        return response.status_code, body["code"], body["msg"]


async def make_bot(user: User, client: httpx.AsyncClient, **portfolio: Any) -> Bot:
    created = await user.portfolio(**portfolio)
    api_key, api_secret = await user.compat_key(created["id"])
    return Bot(user, client, created["id"], api_key, api_secret)
