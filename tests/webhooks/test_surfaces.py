"""The webhook over real HTTP at every address; its token works there and nowhere else."""

import time

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import User, bearer
from tests.trading_api.helpers import set_price
from tests.webhooks.helpers import Hook


@pytest.mark.parametrize("path", ["/webhook/tv", "/v1/webhook/tv", "/api/webhook/tv"])
async def test_every_address_over_real_http(
    app: FastAPI, live_url: str, user: User, path: str
) -> None:
    await set_price(app, "BTCUSDT", "50000")
    hook = await Hook.create(app, user)
    async with httpx.AsyncClient(base_url=live_url) as tradingview:
        # TradingView: text/plain unless the message is valid JSON, no other headers.
        response = await tradingview.post(
            f"{path}/{hook.token}",
            content=b'{"action": "buy", "symbol": "BTCUSDT", "qty": "0.003"}',
            headers={"Content-Type": "application/json"},
        )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.json()["status"] == "executed"
    assert await hook.position("BTCUSDT") == pytest.approx(0.003)


async def test_the_token_reaches_only_its_own_portfolio(app: FastAPI, user: User) -> None:
    await set_price(app, "BTCUSDT", "50000")
    hook = await Hook.create(app, user)
    other_pid = (await user.portfolio(name="other"))["id"]
    answer = await hook.ok(
        {"action": "buy", "symbol": "BTCUSDT", "qty": 0.002, "portfolio_id": other_pid}
    )
    assert answer["status"] == "executed"
    assert await hook.position("BTCUSDT") == pytest.approx(0.002)
    untouched = (await user.get(f"/v1/portfolios/{other_pid}/positions")).json()
    assert untouched == []
    assert (await user.get(f"/v1/portfolios/{other_pid}/signals")).json()["signals"] == []


async def test_the_token_is_refused_on_every_other_surface(
    app: FastAPI, live_url: str, user: User
) -> None:
    hook = await Hook.create(app, user)
    async with httpx.AsyncClient(base_url=live_url) as client:
        for method, path in [
            ("GET", "/v1/portfolios/my"),
            ("GET", f"/v1/portfolios/{hook.portfolio_id}/signals"),
            ("POST", "/v1/order"),
            ("GET", "/api/portfolios/my"),
        ]:
            response = await client.request(method, path, headers=bearer(hook.token))
            assert response.status_code == 401, (path, response.text)
            assert response.json()["error"] == "invalid_api_key"
        # The compatible interface: the token is not an X-MBX-APIKEY either.
        fapi = await client.get(
            "/fapi/v2/account",
            params={"timestamp": int(time.time() * 1000), "signature": "0" * 64},
            headers={"X-MBX-APIKEY": hook.token},
        )
        assert fapi.status_code in (400, 401), fapi.text
        # …and a native API key is not a webhook token.
        key = await user.api_key()
        response = await client.post(f"/webhook/tv/{key}", content=b"buy BTCUSDT 0.001")
        assert response.status_code == 404


async def test_signal_history_is_paged_and_private(
    app: FastAPI, user: User, user_factory: object
) -> None:
    await set_price(app, "ETHUSDT", "2500")
    hook = await Hook.create(app, user)
    for n in range(5):
        await hook.send(f"buy ETHUSDT 0.01 id=n{n}")
    page = (
        await user.get(f"/v1/portfolios/{hook.portfolio_id}/signals", params={"limit": 3})
    ).json()
    assert [s["parsed"][0]["tag"] for s in page["signals"]] == ["n4", "n3", "n2"]
    rest = (
        await user.get(
            f"/v1/portfolios/{hook.portfolio_id}/signals",
            params={"limit": 3, "before_id": page["next_before_id"]},
        )
    ).json()
    assert [s["parsed"][0]["tag"] for s in rest["signals"]] == ["n1", "n0"]
    assert rest["next_before_id"] is None
    one = page["signals"][0]
    assert set(one) >= {
        "id",
        "received_at",
        "body",
        "body_format",
        "parsed",
        "status",
        "error",
        "msg",
        "order_ids",
        "duplicate_of",
    }
    single = await user.get(f"/v1/portfolios/{hook.portfolio_id}/signals/{one['id']}")
    assert single.json() == one
    stranger: User = await user_factory()  # type: ignore[operator]
    hidden = await stranger.get(f"/v1/portfolios/{hook.portfolio_id}/signals")
    assert hidden.status_code == 404
