"""Signing exactly as clients do it (contract §1.3, §8), credentials, replays and rate limits."""

import os
from urllib.parse import quote

import httpx
import pytest
from fastapi import FastAPI

from papertrade.config import Settings
from tests.conftest import User, bearer, client_for, running_app, sign_up
from tests.fapi.helpers import Bot, make_bot, now_ms, signature
from tests.foundation.helpers import hold_the_window
from tests.trading_api.helpers import set_price

ORDER = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"}


async def test_signed_request_and_each_auth_failure(bot: Bot) -> None:
    assert (await bot.call("GET", "/v3/account")).status_code == 200
    good = f"timestamp={now_ms()}"
    sig = signature(bot.api_secret, good)
    flipped = sig[:-1] + ("0" if sig[-1] != "0" else "1")
    cases = [
        ({"X-MBX-APIKEY": bot.api_key}, f"{good}&signature={flipped}", 400, -1022),
        ({"X-MBX-APIKEY": bot.api_key}, f"{good}&signature={sig.upper()}", 200, None),
        ({}, f"{good}&signature={sig}", 401, -2014),
        ({"X-MBX-APIKEY": ""}, f"{good}&signature={sig}", 401, -2014),
        ({"X-MBX-APIKEY": "not a key!"}, f"{good}&signature={sig}", 401, -2014),
        ({"X-MBX-APIKEY": "a" * 64}, f"{good}&signature={sig}", 401, -2015),
        ({"x-mbx-apikey": bot.api_key}, f"{good}&signature={sig}", 200, None),
        ({"X-EXT-APIKEY": bot.api_key}, f"{good}&signature={sig}", 200, None),
        ({"X-MBX-APIKEY": bot.api_key}, good, 400, -1102),
    ]
    for headers, query, status, code in cases:
        response = await bot.client.get(f"/fapi/v3/account?{query}", headers=headers)
        assert response.status_code == status, (headers, response.text)
        if code is not None:
            assert response.json()["code"] == code
            assert isinstance(response.json()["msg"], str)


async def test_timestamp_and_recv_window(bot: Bot) -> None:
    six_seconds_ago = now_ms() - 6000
    assert (await bot.error("GET", "/v3/account", timestamp=six_seconds_ago))[:2] == (400, -1021)
    fine = await bot.call("GET", "/v3/account", {"recvWindow": 10000}, timestamp=six_seconds_ago)
    assert fine.status_code == 200
    ahead = now_ms() + 5000
    assert (await bot.error("GET", "/v3/account", timestamp=ahead))[:2] == (400, -1021)
    assert (await bot.error("GET", "/v3/account", {"recvWindow": 60001}))[:2] == (400, -1131)
    minute = await bot.call(
        "GET", "/v3/account", {"recvWindow": 60000}, timestamp=now_ms() - 59_000
    )
    assert minute.status_code == 200
    status, code, msg = await bot.error("GET", "/v3/account", timestamp="yesterday")
    assert (status, code) == (400, -1102) and "timestamp" in msg
    missing = await bot.client.get(
        f"/fapi/v3/account?signature={signature(bot.api_secret, '')}",
        headers={"X-MBX-APIKEY": bot.api_key},
    )
    assert missing.json()["code"] == -1102 and "timestamp" in missing.json()["msg"]


async def test_params_in_query_body_or_both(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    # Connector style: everything in the query string, empty body, JSON content type.
    query = f"symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.01&timestamp={now_ms()}"
    response = await bot.client.post(
        f"/fapi/v1/order?{query}&signature={signature(bot.api_secret, query)}",
        headers={"X-MBX-APIKEY": bot.api_key, "Content-Type": "application/json;charset=utf-8"},
    )
    assert response.status_code == 200, response.text
    # ccxt/python-binance style: a form body.
    assert (await bot.call("POST", "/v1/order", ORDER, in_body=True)).status_code == 200
    # Split across both: the signed message is query + body with no separator.
    part_q, part_b = "symbol=BTCUSDT&side=BUY", f"type=MARKET&quantity=0.01&timestamp={now_ms()}"
    split = await bot.client.post(
        f"/fapi/v1/order?{part_q}",
        content=f"{part_b}&signature={signature(bot.api_secret, part_q + part_b)}",
        headers={"X-MBX-APIKEY": bot.api_key, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert split.status_code == 200, split.text
    # Query wins over the body for a name sent in both.
    both_q = f"quantity=0.02&timestamp={now_ms()}"
    both_b = "symbol=BTCUSDT&side=BUY&type=MARKET&quantity=5"
    won = await bot.client.post(
        f"/fapi/v1/order?{both_q}",
        content=f"{both_b}&signature={signature(bot.api_secret, both_q + both_b)}",
        headers={"X-MBX-APIKEY": bot.api_key, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert won.json()["origQty"] == "0.020"
    # python-binance style DELETE with a form body; signature over percent-encoded bytes.
    placed = await bot.ok(
        "POST",
        "/v1/order",
        {
            **ORDER,
            "type": "LIMIT",
            "price": "50000",
            "timeInForce": "GTC",
            "newClientOrderId": "my:id/1",
        },
    )
    raw = f"origClientOrderId={quote('my:id/1', safe='')}&symbol=BTCUSDT&timestamp={now_ms()}"
    canceled = await bot.client.request(
        "DELETE",
        "/fapi/v1/order",
        content=f"{raw}&signature={signature(bot.api_secret, raw)}",
        headers={"X-MBX-APIKEY": bot.api_key, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert canceled.status_code == 200, canceled.text
    assert canceled.json()["orderId"] == placed["orderId"]
    assert canceled.json()["status"] == "CANCELED"


async def test_exact_replay_of_a_signed_order_is_refused(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    query = f"symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.01&timestamp={now_ms()}"
    url = f"/fapi/v1/order?{query}&signature={signature(bot.api_secret, query)}"
    headers = {"X-MBX-APIKEY": bot.api_key}
    assert (await bot.client.post(url, headers=headers)).status_code == 200
    again = await bot.client.post(url, headers=headers)
    assert again.status_code == 400 and again.json()["code"] == -1021
    assert "replay" in again.json()["msg"]
    trades = await bot.ok("GET", "/v1/userTrades", {"symbol": "BTCUSDT"})
    assert len(trades) == 1
    # Reads may be repeated.
    read = f"timestamp={now_ms()}"
    read_url = f"/fapi/v3/account?{read}&signature={signature(bot.api_secret, read)}"
    assert (await bot.client.get(read_url, headers=headers)).status_code == 200
    assert (await bot.client.get(read_url, headers=headers)).status_code == 200


async def test_other_credentials_are_refused(
    bot: Bot, user: User, fapi_client: httpx.AsyncClient
) -> None:
    native = await user.api_key()
    token = await user.webhook_token(bot.portfolio_id)
    query = f"timestamp={now_ms()}"
    for headers in (
        {"X-MBX-APIKEY": native, **bearer(native)},
        {"X-MBX-APIKEY": token},
        bearer(native),
    ):
        response = await fapi_client.get(
            f"/fapi/v3/account?{query}&signature={signature(bot.api_secret, query)}",
            headers=headers,
        )
        assert response.status_code == 401
        assert response.json()["code"] in (-2014, -2015)
    # The session cookie of the owner does not sign anything either.
    session = await user.client.get(f"/fapi/v3/account?{query}&signature=00")
    assert session.status_code == 401 and session.json()["code"] == -2014


async def test_revoked_key_and_deleted_portfolio_stop_at_once(user: User, bot: Bot) -> None:
    assert (await bot.call("GET", "/v3/account")).status_code == 200
    keys = (await user.get(f"/v1/portfolios/{bot.portfolio_id}/api-keys")).json()
    revoked = await user.delete(f"/v1/portfolios/{bot.portfolio_id}/api-keys/{keys[0]['id']}")
    assert revoked.status_code in (200, 204), revoked.text
    assert (await bot.error("GET", "/v3/account"))[:2] == (401, -2015)

    other = await make_bot(user, bot.client)
    assert (await other.call("GET", "/v3/account")).status_code == 200
    assert (await user.delete(f"/v1/portfolios/{other.portfolio_id}")).status_code in (200, 204)
    assert (await other.error("GET", "/v3/account"))[:2] == (401, -2015)


async def test_weight_and_order_headers(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    public = await bot.client.get("/fapi/v1/ping")
    assert int(public.headers["X-MBX-USED-WEIGHT-1M"]) >= 1
    first = await bot.call("GET", "/v3/account")
    used = int(first.headers["X-MBX-USED-WEIGHT-1M"])
    second = await bot.call("GET", "/v3/account")
    assert int(second.headers["X-MBX-USED-WEIGHT-1M"]) in (used + 5, 5)  # same or next minute
    order = await bot.call("POST", "/v1/order", ORDER)
    assert int(order.headers["X-MBX-ORDER-COUNT-10S"]) >= 1
    assert int(order.headers["X-MBX-ORDER-COUNT-1M"]) >= 1
    refused = await bot.call("POST", "/v1/order", {**ORDER, "quantity": "1000"})
    assert refused.status_code == 400 and "X-MBX-USED-WEIGHT-1M" in refused.headers
    unknown = await bot.client.get("/fapi/v1/nothing-here")
    assert unknown.status_code == 404 and "X-MBX-USED-WEIGHT-1M" in unknown.headers


async def test_429_with_retry_after_when_budgets_are_spent(
    user: User, fapi_client: httpx.AsyncClient, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    settings = app.state.ctx.settings
    saved = (
        settings.rate_limit_compat_weight_per_min,
        settings.rate_limit_compat_orders_per_10s,
    )
    try:
        hold_the_window()  # the weight and the orders below count in one window each
        settings.rate_limit_compat_weight_per_min = 12
        weighed = await make_bot(user, fapi_client)
        answers = [await weighed.call("GET", "/v3/account") for _ in range(5)]
        limited = [r for r in answers if r.status_code == 429]
        assert limited, [r.status_code for r in answers]
        assert limited[0].json()["code"] == -1003 and int(limited[0].headers["Retry-After"]) >= 1

        settings.rate_limit_compat_weight_per_min = 10_000
        settings.rate_limit_compat_orders_per_10s = 2
        ordering = await make_bot(user, fapi_client)
        answers = [await ordering.call("POST", "/v1/order", ORDER) for _ in range(4)]
        limited = [r for r in answers if r.status_code == 429]
        assert limited, [r.text for r in answers]
        assert limited[0].json()["code"] == -1015 and "Retry-After" in limited[0].headers
    finally:
        (
            settings.rate_limit_compat_weight_per_min,
            settings.rate_limit_compat_orders_per_10s,
        ) = saved


async def test_legacy_prefix_reaches_the_same_handlers(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    prefix = app.state.ctx.settings.legacy_prefix + "/binance/fapi"
    placed = await bot.ok("POST", "/v1/order", ORDER, prefix=prefix)
    listed = await bot.ok("GET", "/v1/allOrders", {"symbol": "BTCUSDT"})
    assert [o["orderId"] for o in listed] == [placed["orderId"]]
    assert (await bot.client.get(f"{prefix}/v1/ping")).json() == {}
    missing = await bot.client.get(f"{prefix}/v1/nope")
    assert missing.status_code == 404 and missing.json()["code"] == -5000


async def test_replays_are_refused_across_processes_through_redis(
    isolated_settings: Settings,
) -> None:
    from redis.asyncio import Redis

    url = os.environ.get("PAPERTRADE_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    redis = Redis.from_url(url)
    try:
        await redis.ping()
    except Exception:
        pytest.fail(f"Redis is required for this test at {url}")
    finally:
        await redis.aclose()
    # A database of its own: on PostgreSQL with Redis, `one` must lead (and publish prices).
    shared = isolated_settings.model_copy(update={"redis_url": url})
    async with running_app(shared) as one, running_app(shared) as two:
        user = await sign_up(one)
        async with client_for(one) as a, client_for(two) as b:
            bot = await make_bot(user, a)
            await set_price(one, "BTCUSDT", "60000")
            await set_price(two, "BTCUSDT", "60000")
            query = f"symbol=BTCUSDT&side=BUY&type=MARKET&quantity=0.01&timestamp={now_ms()}"
            url_path = f"/fapi/v1/order?{query}&signature={signature(bot.api_secret, query)}"
            headers = {"X-MBX-APIKEY": bot.api_key}
            assert (await a.post(url_path, headers=headers)).status_code == 200
            replay = await b.post(url_path, headers=headers)
        await user.client.aclose()
    assert replay.status_code == 400 and replay.json()["code"] == -1021
