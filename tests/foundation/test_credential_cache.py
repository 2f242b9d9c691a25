"""Keys are remembered between requests, yet a revocation holds on the very next request,
in every process of a deployment (the processes share Redis)."""

from urllib.parse import urlencode

import httpx

from papertrade.config import Settings
from tests.conftest import bearer, client_for, running_app, sign_up
from tests.fapi.helpers import now_ms, signature
from tests.foundation.helpers import with_redis


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
