"""Rates per credential by the owner's tier (docs/tiers.md "Rates by tier"): web sessions, native
API keys and /fapi key pairs, each refused with its own surface's 429 shape once spent."""

from pathlib import Path

import httpx
from fastapi import FastAPI

from papertrade.fapi.auth import budgets
from papertrade.tiers.table import ELITE, FREE, PRO
from tests.conftest import User, client_for
from tests.fakes.trongrid import FakeTronGrid
from tests.fapi.helpers import make_bot
from tests.foundation.helpers import hold_the_window
from tests.wallet.conftest import fund


async def _until_limited(call: object, most: int) -> httpx.Response:
    """Call until the first 429, which must come within `most` calls (the caller holds the
    limiter's window: on a loaded machine a minute's budget can take longer than a minute)."""
    for _ in range(most):
        response: httpx.Response = await call()  # type: ignore[operator]
        if response.status_code == 429:
            return response
        assert response.status_code == 200, response.text
    raise AssertionError(f"no 429 in {most} requests")


async def test_a_free_session_gets_the_free_rate(member: User) -> None:
    """(A native key's rate by tier: tests/wallet/test_tiers.py.)"""
    hold_the_window()
    limited = await _until_limited(lambda: member.get("/v1/launch/tiers/me"), 600 + 1)
    body = limited.json()
    assert body["error"] == "rate_limited" and "600 requests per minute" in body["msg"]
    assert int(limited.headers["Retry-After"]) >= 1


async def test_fapi_weight_is_the_free_tiers_until_an_upgrade(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    text = (Path(__file__).parents[2] / "docs" / "tiers.md").read_text()
    assert 'request 31      429   {"code": -1003' in text  # the worked example
    assert "1200 request weight per 1 MINUTE" in text
    hold_the_window()
    async with client_for(wapp) as client:
        bot = await make_bot(member, client)

        async def weight_shown() -> int:
            """exchangeInfo's REQUEST_WEIGHT limit for a request carrying the key (as
            python-binance's do); without a key it shows the service's ceiling."""
            headers = {"X-MBX-APIKEY": bot.api_key}
            info = (await client.get("/fapi/v1/exchangeInfo", headers=headers)).json()
            return int(info["rateLimits"][0]["limit"])

        assert await weight_shown() == FREE.fapi_weight_per_min
        ceiling = wapp.state.ctx.settings.rate_limit_compat_weight_per_min
        for headers in ({}, {"X-MBX-APIKEY": "not a key"}, {"X-MBX-APIKEY": "A" * 64}):
            info = await client.get("/fapi/v1/exchangeInfo", headers=headers)
            assert info.status_code == 200 and info.json()["rateLimits"][0]["limit"] == ceiling
        # All open orders without a symbol weigh 40: free's 1200 a minute is 30 of them.
        limited = await _until_limited(lambda: bot.call("GET", "/v1/openOrders"), 31)
        body = limited.json()
        assert body["code"] == -1003 and "1200 request weight per 1 MINUTE" in body["msg"]
        assert int(limited.headers["Retry-After"]) >= 1
        assert "X-MBX-USED-WEIGHT-1M" in limited.headers

        await fund(wapp, fake, member, "15")
        paid = await member.post("/v1/launch/tiers/me", json={"tier": "pro"})
        assert paid.status_code == 200, paid.text
        assert await weight_shown() == PRO.fapi_weight_per_min
        # Pro's 2400: past free's 1200 in the same window, without a refusal.
        answer = await bot.call("GET", "/v1/openOrders")
        assert answer.status_code == 200, answer.text
        assert int(answer.headers["X-MBX-USED-WEIGHT-1M"]) > FREE.fapi_weight_per_min


def test_the_docs_table_is_the_code() -> None:
    text = (Path(__file__).parents[2] / "docs" / "tiers.md").read_text()
    rows = {
        "REST API requests / minute": "api_requests_per_min",
        "web session requests / minute": "session_requests_per_min",
        "`/fapi` request weight / minute": "fapi_weight_per_min",
    }
    for words, field in rows.items():
        numbers = " | ".join(str(getattr(tier, field)) for tier in (FREE, PRO, ELITE))
        assert f"| {words} | {numbers} |" in text, words
    orders = " | ".join(
        f"{t.fapi_orders_per_10s}, {t.fapi_orders_per_min}" for t in (FREE, PRO, ELITE)
    )
    assert f"| `/fapi` new orders / 10 s, / minute | {orders} |" in text


def test_tier_budgets_never_pass_the_settings(wapp: FastAPI) -> None:
    ctx = wapp.state.ctx
    settings = ctx.settings
    assert budgets(ctx, FREE) == (1200, 100, 400)
    assert budgets(ctx, PRO) == budgets(ctx, ELITE) == (2400, 300, 1200)  # Binance's own
    assert budgets(ctx, None) == (
        settings.rate_limit_compat_weight_per_min,
        settings.rate_limit_compat_orders_per_10s,
        settings.rate_limit_compat_orders_per_min,
    )
