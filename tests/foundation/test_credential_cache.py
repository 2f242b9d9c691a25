"""Keys are remembered between requests, yet a revocation holds on the very next request,
in every process of a deployment (the processes share Redis)."""

from urllib.parse import urlencode

import httpx

from papertrade.config import Settings
from tests.conftest import bearer, client_for, running_app, sign_up
from tests.fapi.helpers import now_ms, signature
from tests.foundation.helpers import hold_the_window, with_redis


async def test_a_native_key_revoked_in_one_process_fails_in_the_other(
    isolated_settings: Settings,
) -> None:
    settings = await with_redis(isolated_settings)
    async with running_app(settings) as one, running_app(settings) as two:
        user = await sign_up(one)
        created = (await user.post("/v1/user/api-keys", json={"scope": "write"})).json()
        async with client_for(two) as other:
            # Both processes have looked the key up, so both remember it.
            assert (await user.client.get("/v1/user", headers=bearer(created["key"]))).is_success
            assert (await other.get("/v1/user", headers=bearer(created["key"]))).is_success
            revoked = await user.delete(f"/v1/user/api-keys/{created['id']}")
            assert revoked.status_code == 200, revoked.text
            answer = await other.get("/v1/user", headers=bearer(created["key"]))
        assert answer.status_code == 401
        assert answer.json()["error"] == "invalid_api_key"
        await user.client.aclose()


async def test_a_compat_key_revoked_in_one_process_fails_in_the_other(
    isolated_settings: Settings,
) -> None:
    settings = await with_redis(isolated_settings)
    async with running_app(settings) as one, running_app(settings) as two:
        user = await sign_up(one)
        pid = (await user.portfolio())["id"]
        created = (await user.post(f"/v1/portfolios/{pid}/api-keys", json={"note": "bot"})).json()

        async def balance(app_client: httpx.AsyncClient) -> tuple[int, dict[str, object]]:
            query = urlencode({"timestamp": now_ms()})
            query += "&signature=" + signature(created["api_secret"], query)
            response = await app_client.get(
                f"/fapi/v2/balance?{query}", headers={"X-MBX-APIKEY": created["api_key"]}
            )
            return response.status_code, response.json()

        async with client_for(two) as other:
            assert (await balance(other))[0] == 200
            revoked = await user.delete(f"/v1/portfolios/{pid}/api-keys/{created['id']}")
            assert revoked.status_code == 200, revoked.text
            status, body = await balance(other)
        assert (status, body["code"]) == (401, -2015)
        await user.client.aclose()


async def test_a_cached_key_is_charged_once_per_request_and_refused_once_revoked(
    isolated_settings: Settings,
) -> None:
    """With Redis, a remembered key's request is charged and its key confirmed in one round trip
    (auth/v1.py, fapi/auth.py): each request costs its budget exactly once, a revocation in the
    same process holds on the next request, on both surfaces."""
    settings = (await with_redis(isolated_settings)).model_copy(
        update={"rate_limit_api_key_per_min": 3}
    )
    async with running_app(settings) as app:
        user = await sign_up(app)
        pid = (await user.portfolio())["id"]
        native = (await user.post("/v1/user/api-keys", json={"scope": "read"})).json()
        compat = (await user.post(f"/v1/portfolios/{pid}/api-keys", json={"note": "bot"})).json()
        async with client_for(app) as bot:
            hold_the_window()  # the counts below within one window
            answers = [
                (await bot.get("/v1/user", headers=bearer(native["key"]))).status_code
                for _ in range(4)
            ]
            weights = []
            for _ in range(3):
                query = urlencode({"timestamp": now_ms()})
                query += "&signature=" + signature(compat["api_secret"], query)
                response = await bot.get(
                    f"/fapi/v2/balance?{query}", headers={"X-MBX-APIKEY": compat["api_key"]}
                )
                assert response.status_code == 200, response.text
                weights.append(int(response.headers["X-MBX-USED-WEIGHT-1M"]))
            assert (await user.delete(f"/v1/user/api-keys/{native['id']}")).status_code == 200
            gone = await user.delete(f"/v1/portfolios/{pid}/api-keys/{compat['id']}")
            assert gone.status_code == 200
            refused = await bot.get("/v1/user", headers=bearer(native["key"]))
            query = urlencode({"timestamp": now_ms()})
            query += "&signature=" + signature(compat["api_secret"], query)
            refused_fapi = await bot.get(
                f"/fapi/v2/balance?{query}", headers={"X-MBX-APIKEY": compat["api_key"]}
            )
        await user.client.aclose()
    assert answers == [200, 200, 200, 429]
    assert weights[1] - weights[0] == weights[2] - weights[1] == weights[0] > 0
    assert refused.status_code == 401 and refused.json()["error"] == "invalid_api_key"
    assert (refused_fapi.status_code, refused_fapi.json()["code"]) == (401, -2015)
