"""Credentials are never interchangeable on /v1 (foundation point 7; the /fapi side is in
tests/fapi/test_signing.py, the webhook side in tests/webhooks/test_surfaces.py)."""

from fastapi import FastAPI

from tests.conftest import User, bearer, client_for


async def test_only_native_keys_and_sessions_open_v1(user: User, app: FastAPI) -> None:
    pid = (await user.portfolio())["id"]
    compat_key, compat_secret = await user.compat_key(pid)
    token = await user.webhook_token(pid)
    native = await user.api_key("write")
    async with client_for(app) as client:
        assert (await client.get("/v1/portfolios/my", headers=bearer(native))).status_code == 200
        for foreign in (compat_key, compat_secret, token, f"pts_{native}"):
            for path in ("/v1/portfolios/my", f"/v1/portfolios/{pid}", "/api/user"):
                response = await client.get(path, headers=bearer(foreign))
                assert response.status_code == 401, (foreign[:6], path)
                assert response.json()["error"] == "invalid_api_key"
            write = await client.post(
                "/v1/order",
                headers=bearer(foreign),
                json={
                    "portfolio_id": pid,
                    "symbol": "BTCUSDT",
                    "side": "buy",
                    "type": "market",
                    "quantity": "0.01",
                },
            )
            assert write.status_code == 401
        # A compatible key in Binance's header opens nothing on /v1 either.
        sneaky = await client.get("/v1/portfolios/my", headers={"X-MBX-APIKEY": compat_key})
        assert sneaky.status_code == 401 and sneaky.json()["error"] == "unauthenticated"
