"""Traffic that no credential vouches for is budgeted per client address, over real HTTP from
several loopback addresses: anonymous and public reads, refused API keys and sessions, unknown
webhook tokens, bad /fapi keys; callers with a valid credential are never refused for it, and
X-Forwarded-For counts only from a trusted proxy (issue 14 item 15)."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from papertrade.auth.ip_budget import WINDOW_S
from papertrade.config import Settings
from tests.conftest import User, bearer, running_app, sign_up, unique_email
from tests.foundation.helpers import client_from, fresh_window, hold_the_window
from tests.liveserver import free_port, live_server
from tests.reliability.crashkit import Service
from tests.trading_api.helpers import set_price

BUDGET = 3


@asynccontextmanager
async def _tight(settings: Settings, **extra: Any) -> AsyncIterator[tuple[FastAPI, str, User]]:
    """The app with a budget of 3 a minute per address, served over HTTP, and a user (signed up
    through the app itself)."""
    tight = settings.model_copy(update={"rate_limit_unauthenticated_ip_per_min": BUDGET, **extra})
    async with running_app(tight) as app, live_server(app) as url:
        user = await sign_up(app)
        hold_the_window()  # fapi weight is per minute as well
        try:
            yield app, url, user
        finally:
            await user.client.aclose()


def _assert_budget_spent(answer: httpx.Response) -> None:
    assert answer.status_code == 429, answer.text
    assert answer.json()["error"] == "rate_limited"
    assert "without valid credentials" in answer.json()["msg"]
    assert 1 <= int(answer.headers["Retry-After"]) <= 60


async def test_anonymous_reads_are_budgeted_and_valid_credentials_are_not(
    settings: Settings,
) -> None:
    async with _tight(settings) as (_, url, user):
        key = await user.api_key("read")
        async with client_from(url, "127.0.0.20") as client:
            reads = [await client.get("/v1/market/symbols") for _ in range(BUDGET + 1)]
            assert [r.status_code for r in reads[:BUDGET]] == [200] * BUDGET
            _assert_budget_spent(reads[-1])
            # A forged session cookie does not make a public read free.
            forged = await client.get("/v1/market/quotes", headers={"Cookie": "pt_session=x"})
            _assert_budget_spent(forged)
            # A valid key at the same address is served, on its own and on public endpoints.
            assert (await client.get("/v1/user", headers=bearer(key))).status_code == 200
            assert (await client.get("/v1/market/symbols", headers=bearer(key))).status_code == 200
        async with client_from(url, "127.0.0.21") as elsewhere:
            assert (await elsewhere.get("/v1/market/symbols")).status_code == 200


async def test_refused_api_keys_are_budgeted(settings: Settings) -> None:
    async with _tight(settings) as (_, url, user):
        key = await user.api_key()
        async with client_from(url, "127.0.0.22") as client:
            refused = [
                await client.get("/v1/user", headers=bearer("ptk_not-a-real-key")),
                await client.get("/v1/user", headers={"Authorization": "Basic eDp5"}),
                await client.get("/v1/portfolios/my", headers=bearer("ptk_another-one")),
            ]
            assert [r.status_code for r in refused] == [401] * BUDGET
            _assert_budget_spent(await client.get("/v1/user", headers=bearer("ptk_guess")))
            assert (await client.get("/v1/user", headers=bearer(key))).status_code == 200
            # Sign-in has budgets of its own (test_sign_in_throttling.py), not this one.
            body = {"email": unique_email("nobody"), "password": "not-the-password"}
            assert (await client.post("/v1/auth/login", json=body)).status_code == 401


async def test_unknown_webhook_tokens_are_budgeted(settings: Settings) -> None:
    async with _tight(settings) as (app, url, user):
        pid = (await user.portfolio())["id"]
        token = await user.webhook_token(pid)
        await set_price(app, "BTCUSDT", "60000")
        async with client_from(url, "127.0.0.23") as sender:

            async def alert(path: str) -> httpx.Response:
                plain = {"Content-Type": "text/plain"}
                return await sender.post(path, content="buy BTCUSDT 0.002", headers=plain)

            unknown = [
                await alert(f"{path}/whk_unknown-token")
                for path in ("/webhook/tv", "/v1/webhook/tv", "/webhook/tv")
            ]
            assert [r.json()["error"] for r in unknown] == ["webhook_not_found"] * BUDGET
            _assert_budget_spent(await alert("/webhook/tv/whk_next-guess"))
            # The real token's alerts still execute from that address.
            executed = await alert(f"/webhook/tv/{token}")
            assert executed.status_code == 200, executed.text
            assert executed.json()["status"] == "executed"


async def test_bad_fapi_keys_are_weighed_per_address(settings: Settings) -> None:
    async with _tight(settings, rate_limit_compat_weight_per_min=20) as (_, url, _user):
        headers = {"X-MBX-APIKEY": "NotARealKey"}
        async with client_from(url, "127.0.0.24") as client:
            answers = [
                await client.get("/fapi/v2/balance", params={"timestamp": 1}, headers=headers)
                for _ in range(25)
            ]
        async with client_from(url, "127.0.0.26") as elsewhere:
            other = await elsewhere.get("/fapi/v2/balance", headers=headers)
    codes = [a.json()["code"] for a in answers]
    refused = codes.index(-1003)
    assert refused > 0 and codes[:refused] == [-2015] * refused
    assert codes[refused:] == [-1003] * (len(codes) - refused)
    assert answers[-1].status_code == 429 and int(answers[-1].headers["Retry-After"]) >= 1
    assert other.json()["code"] == -2015  # weighed per address


async def test_forwarded_for_is_believed_only_from_a_trusted_proxy(settings: Settings) -> None:
    def via(client_ip: str) -> dict[str, str]:
        return {"X-Forwarded-For": client_ip}

    async with _tight(settings) as (_, url, _user), client_from(url, "127.0.0.25") as client:
        # Not a trusted proxy: the header is the client's own word, and ignored.
        answers = [
            await client.get("/v1/market/symbols", headers=via(f"203.0.113.{n}")) for n in range(4)
        ]
        assert [a.status_code for a in answers] == [200] * 3 + [429]

    async with (
        _tight(settings, trusted_proxies=["127.0.0.25"]) as (_, url, _user),
        client_from(url, "127.0.0.25") as proxy,
    ):
        first = [
            await proxy.get("/v1/market/symbols", headers=via("203.0.113.7")) for _ in range(3)
        ]
        assert [a.status_code for a in first] == [200] * 3
        # A client writing its own X-Forwarded-For before the proxy's entry gains nothing.
        spoofed = await proxy.get("/v1/market/symbols", headers=via("198.51.100.1, 203.0.113.7"))
        _assert_budget_spent(spoofed)
        other = await proxy.get("/v1/market/symbols", headers=via("203.0.113.8"))
        assert other.status_code == 200


async def test_papertrade_serve_believes_forwarded_for_only_from_trusted_proxies(
    tmp_path: Path,
) -> None:
    """`papertrade serve` itself: uvicorn must not rewrite the client address from
    X-Forwarded-For sent by a peer on 127.0.0.1 unless that peer is a trusted proxy."""
    budget = {"PAPERTRADE_RATE_LIMIT_UNAUTHENTICATED_IP_PER_MIN": str(BUDGET)}

    async def statuses(env: dict[str, str], clients: list[str]) -> list[int]:
        service = Service(tmp_path / str(len(env)), free_port(), {**budget, **env})
        await asyncio.to_thread(service.start)
        await fresh_window(WINDOW_S, 10)
        try:
            async with httpx.AsyncClient(base_url=service.url) as client:
                return [
                    (
                        await client.get("/v1/market/status", headers={"X-Forwarded-For": ip})
                    ).status_code
                    for ip in clients
                ]
        finally:
            await asyncio.to_thread(service.stop)

    clients = ["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4"]
    assert await statuses({}, clients) == [200] * 3 + [429]
    trusted = {"PAPERTRADE_TRUSTED_PROXIES": '["127.0.0.1"]'}
    assert await statuses(trusted, clients) == [200] * 4
