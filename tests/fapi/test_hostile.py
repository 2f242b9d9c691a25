"""Hostile input: every answer under /fapi is a Binance-shaped 4xx, never a 500."""

from collections.abc import AsyncIterator
from urllib.parse import urlencode

import httpx
import pytest
from fastapi import FastAPI

from tests.conftest import ORIGIN
from tests.fapi.helpers import Bot, now_ms, signature
from tests.trading_api.helpers import set_price

NASTY = [
    " ",
    "0",
    "-0",
    "abc",
    "1e",
    "0x10",
    "NaN",
    "nan",
    "Infinity",
    "-inf",
    "1,5",
    "1.2.3",
    "１２",
    "1_000",
    "+5",
    ".5",
    "5.",
    "1E+5",
    "1e400",
    "1e-400",
    "9" * 25,
    "-60000",
    "99999999999999999999.99999999999999999999",
    "💥",
    "\x00",
    "%",
    "a=b",
    "true",
    "None",
    "'; DROP TABLE orders; --",
    "B" * 10_000,
]
ORDER = {
    "symbol": "BTCUSDT",
    "side": "BUY",
    "type": "LIMIT",
    "quantity": "0.01",
    "price": "50000",
    "timeInForce": "GTC",
}


def assert_refused_or_fine(response: httpx.Response, context: object) -> bool:
    """A valid value may pass ("0" is a fine client id); anything else is a Binance 4xx."""
    if response.status_code == 200:
        return True
    assert_binance_4xx(response, context)
    return False


def assert_binance_4xx(response: httpx.Response, context: object) -> None:
    assert 400 <= response.status_code < 500, (context, response.status_code, response.text)
    body = response.json()
    assert set(body) == {"code", "msg"}, (context, body)
    assert isinstance(body["code"], int) and body["code"] < 0 and isinstance(body["msg"], str)
    assert len(body["msg"]) < 2000, context


@pytest.fixture
async def stranger(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """A client from its own address, so its public weight is charged to nobody else."""
    transport = httpx.ASGITransport(app=app, client=("10.9.8.7", 4242))
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN, timeout=30) as client:
        yield client


async def test_nasty_values_in_every_order_parameter(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    accepted = 0
    for name in (
        "symbol",
        "side",
        "type",
        "quantity",
        "price",
        "timeInForce",
        "reduceOnly",
        "newClientOrderId",
        "newOrderRespType",
        "positionSide",
        "recvWindow",
    ):
        for value in NASTY:
            response = await bot.call("POST", "/v1/order", {**ORDER, name: value}, in_body=True)
            accepted += assert_refused_or_fine(response, (name, value))
    for name in ("orderId", "symbol", "origClientOrderId"):
        for value in NASTY:
            response = await bot.call("GET", "/v1/order", {"symbol": "BTCUSDT", name: value})
            assert_refused_or_fine(response, (name, value))
    for name in ("leverage", "symbol"):
        for value in NASTY:
            response = await bot.call(
                "POST", "/v1/leverage", {"symbol": "BTCUSDT", "leverage": "5", name: value}
            )
            assert_refused_or_fine(response, (name, value))
    for name in ("limit", "startTime", "endTime", "fromId", "orderId"):
        for value in NASTY:
            response = await bot.call("GET", "/v1/userTrades", {"symbol": "BTCUSDT", name: value})
            assert_refused_or_fine(response, (name, value))
    assert accepted < 40  # of 341 orders, only the odd valid spelling went through
    assert (await bot.ok("GET", "/v3/account"))["totalWalletBalance"] != "0.00000000"


async def test_nasty_values_on_public_endpoints(stranger: httpx.AsyncClient) -> None:
    for path, name in (
        ("/v1/klines?interval=1m", "symbol"),
        ("/v1/klines?symbol=BTCUSDT", "interval"),
        ("/v1/klines?symbol=BTCUSDT&interval=1m", "limit"),
        ("/v1/klines?symbol=BTCUSDT&interval=1m", "startTime"),
        ("/v1/depth?symbol=BTCUSDT", "limit"),
        ("/v1/ticker/price?", "symbol"),
        ("/v1/fundingRate?symbol=BTCUSDT", "limit"),
    ):
        for value in NASTY:
            separator = "&" if "?" in path and not path.endswith("?") else ""
            url = f"/fapi{path}{separator}{urlencode({name: value})}"
            response = await stranger.get(url)
            assert_refused_or_fine(response, (path, name, value))


async def test_huge_quantities_long_symbols_and_missing_fields(bot: Bot, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    cases = [
        ({**ORDER, "quantity": "99999999999999999999"}, -4005),
        ({**ORDER, "type": "MARKET", "price": "", "quantity": "1e30"}, -4005),
        ({**ORDER, "price": "-60000"}, -4001),
        ({**ORDER, "price": "1e30"}, -4002),
        ({**ORDER, "symbol": "X" * 10_000}, -1100),
        ({k: v for k, v in ORDER.items() if k != "symbol"}, -1102),
        ({k: v for k, v in ORDER.items() if k != "side"}, -1102),
        ({k: v for k, v in ORDER.items() if k != "quantity"}, -1102),
        ({k: v for k, v in ORDER.items() if k != "price"}, -1102),
        ({**ORDER, "orderId": "1"}, None),  # unknown parameters are ignored, as on Binance
    ]
    for params, code in cases:
        response = await bot.call("POST", "/v1/order", params, in_body=True)
        if code is None:
            assert response.status_code == 200, response.text
            continue
        assert_binance_4xx(response, params.get("quantity"))
        assert response.json()["code"] == code, (params.get("symbol", "")[:20], response.text)


async def test_duplicates_non_utf8_and_raw_bodies(bot: Bot) -> None:
    headers = {"X-MBX-APIKEY": bot.api_key}
    query = f"symbol=BTCUSDT&symbol=ETHUSDT&timestamp={now_ms()}"
    twice = await bot.client.get(
        f"/fapi/v1/openOrders?{query}&signature={signature(bot.api_secret, query)}",
        headers=headers,
    )
    assert_binance_4xx(twice, "duplicate")
    assert twice.json()["code"] == -1101
    bad_escape = await bot.client.get("/fapi/v1/ticker/price?symbol=%FF%FE", headers=headers)
    assert_binance_4xx(bad_escape, "escape")
    assert bad_escape.json()["code"] == -1100
    for body in (b"\xff\xfe\x00garbage", b'{"symbol": "BTCUSDT"}', b"&&&===&", b"=" * 5000):
        response = await bot.client.post(
            "/fapi/v1/order",
            content=body,
            headers={**headers, "Content-Type": "application/x-www-form-urlencoded"},
        )
        assert_binance_4xx(response, body[:20])
    too_many = "&".join(f"p{i}=1" for i in range(100))
    assert_binance_4xx(await bot.client.get(f"/fapi/v1/time?{too_many}"), "too many")
    big = await bot.client.post("/fapi/v1/order", content=b"a=" + b"x" * 200_000, headers=headers)
    assert big.status_code == 413 and big.json()["code"] < 0
    weird_signature = f"timestamp={now_ms()}&signature=%F0%9F%92%A5"
    assert_binance_4xx(
        await bot.client.get(f"/fapi/v3/account?{weird_signature}", headers=headers), "sig"
    )


async def test_unknown_paths_methods_and_unsupported_endpoints(
    stranger: httpx.AsyncClient, bot: Bot
) -> None:
    cases = [
        ("GET", "/fapi/v1/doesNotExist", 404, -5000),
        ("GET", "/fapi/v9/ping", 404, -5000),
        ("GET", "/fapi/", 404, -5000),
        ("DELETE", "/fapi/v1/ping", 405, -5000),
        ("PATCH", "/fapi/v1/order", 405, -5000),
        ("PUT", "/fapi/v1/positionMargin", 405, -5000),  # offered for POST only
        ("DELETE", "/fapi/v1/positionMargin/history", 405, -5000),  # GET only
        ("PUT", "/fapi/v1/order", 400, -1020),
        ("PUT", "/fapi/v1/batchOrders", 400, -1020),  # modifying, as PUT /fapi/v1/order
        ("GET", "/fapi/v1/batchOrders", 405, -5000),
        ("POST", "/fapi/v1/batchOrders", 401, -2014),  # offered now: signed like every order
        ("POST", "/fapi/v1/listenKey", 401, -2014),  # offered now: API key only (issue 35)
        ("PUT", "/fapi/v1/listenKey", 401, -2014),
        ("POST", "/fapi/v1/algoOrder", 401, -2014),  # offered now: signed like every order
        ("GET", "/fapi/v1/openAlgoOrders", 401, -2014),
        ("GET", "/fapi/v1/aggTrades?symbol=BTCUSDT", 400, -1020),
        ("GET", "/dapi/v1/exchangeInfo", 400, -1020),
        ("GET", "/eapi/v1/exchangeInfo", 400, -1020),
        ("GET", "/sapi/v1/capital/config/getall", 400, -1020),
        ("GET", "/api/v3/exchangeInfo", 400, -1020),
        ("GET", "/fapi/" + "x" * 5000, 404, -5000),
    ]
    for method, path, status, code in cases:
        response = await stranger.request(method, path)
        assert response.status_code == status, (method, path, response.text)
        assert response.json()["code"] == code, (method, path, response.text)
        assert "X-MBX-USED-WEIGHT-1M" in response.headers
    signed_modify = await bot.call("PUT", "/v1/order", {"symbol": "BTCUSDT", "orderId": 1})
    assert signed_modify.json()["code"] == -1020


async def test_every_endpoint_answers_at_both_addresses(
    stranger: httpx.AsyncClient, app: FastAPI
) -> None:
    from papertrade.fapi.routes import endpoints

    legacy = app.state.ctx.settings.legacy_prefix + "/binance/fapi"
    listed = endpoints()
    assert len(listed) >= 39
    for method, path in listed:
        for prefix in ("/fapi", legacy):
            response = await stranger.request(method, prefix + path)
            assert response.status_code not in (404, 405, 500), (method, prefix + path)
            if response.status_code != 200:  # public ones answer; signed ones want a key
                assert_binance_4xx(response, (method, path))
