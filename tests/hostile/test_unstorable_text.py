"""Text the databases cannot keep is the caller's mistake, on SQLite and PostgreSQL alike
(issue 14 item 3).

PostgreSQL text refuses NUL (U+0000) and no database stores half a surrogate pair: sent in a body
field, a path or a query parameter they must come back as 422 validation_error (-1100 on /fapi),
never as a 500 with a traceback and the SQL parameters at error level in the log.
"""

import logging
from collections.abc import Iterator
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts

from papertrade.kit.schemas import StrictInput
from tests.conftest import ORIGIN, User
from tests.fapi.helpers import make_bot

NUL = "\x00"


@pytest.fixture
def errors_logged() -> Iterator[list[logging.LogRecord]]:
    """Every record at error level or above while the test runs (filled in as they come)."""
    found: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            found.append(record)

    handler = Keep(logging.ERROR)
    logging.getLogger().addHandler(handler)
    try:
        yield found
    finally:
        logging.getLogger().removeHandler(handler)


def _refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 422, response.text
    body = response.json()
    assert body["error"] == "validation_error"
    assert body["msg"].startswith(f"{field}: "), body


async def test_nul_in_any_body_field_is_refused(
    user: User, anon: httpx.AsyncClient, errors_logged: list[logging.LogRecord]
) -> None:
    portfolio = await user.portfolio(name="before")
    pid = portfolio["id"]
    order = {"portfolio_id": pid, "symbol": "BTCUSDT", "side": "buy", "quantity": "0.01"}
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("POST", "/v1/portfolios", {"name": f"swing{NUL}"}, "name"),
        ("POST", "/v1/portfolios", {"name": "ok", "description": f"a{NUL}b"}, "description"),
        ("PATCH", f"/v1/portfolios/{pid}", {"name": f"after{NUL}"}, "name"),
        ("PATCH", f"/v1/portfolios/{pid}", {"description": NUL}, "description"),
        ("POST", "/v1/user/api-keys", {"note": f"bot{NUL}", "scope": "read"}, "note"),
        ("POST", f"/v1/portfolios/{pid}/api-keys", {"note": f"bot{NUL}"}, "note"),
        ("POST", "/v1/order", order | {"symbol": f"BTCUSDT{NUL}"}, "symbol"),
        ("POST", "/v1/order", order | {"client_order_id": f"a{NUL}"}, "client_order_id"),
        (
            "POST",
            f"/v1/portfolios/{pid}/leverage",
            {"symbol": f"BTC{NUL}", "leverage": 5},
            "symbol",
        ),
    ]
    for method, url, body, field in cases:
        _refused(
            await user.client.request(method, url, json=body, headers=user.write_headers()), field
        )
    sign_in = {"email": f"{user.email}{NUL}", "password": user.password}
    _refused(await anon.post("/v1/auth/login", json=sign_in, headers={"Origin": ORIGIN}), "email")
    sign_up = {"email": "nul@example.com", "password": f"long enough{NUL}phrase"}
    _refused(
        await anon.post("/v1/auth/signup", json=sign_up, headers={"Origin": ORIGIN}), "password"
    )

    unchanged = (await user.get(f"/v1/portfolios/{pid}")).json()
    assert (unchanged["name"], unchanged["description"]) == ("before", "")
    assert [p["name"] for p in (await user.get("/v1/portfolios/my")).json()] == ["before"]
    assert errors_logged == []


async def test_an_unpaired_surrogate_in_a_body_is_refused(
    user: User, errors_logged: list[logging.LogRecord]
) -> None:
    # JSON may spell half a surrogate pair (\ud800); it decodes to text no database can store.
    pid = (await user.portfolio())["id"]
    cases = [
        ("POST", "/v1/portfolios", b'{"name": "a\\ud800b"}', "name"),
        ("PATCH", f"/v1/portfolios/{pid}", b'{"description": "\\udc00"}', "description"),
        ("POST", "/v1/user/api-keys", b'{"note": "\\ud83d", "scope": "read"}', "note"),
    ]
    for method, url, raw, field in cases:
        headers = user.write_headers() | {"Content-Type": "application/json"}
        _refused(await user.client.request(method, url, content=raw, headers=headers), field)
    assert errors_logged == []


async def test_nul_in_a_path_or_query_parameter_is_refused(
    user: User, anon: httpx.AsyncClient, errors_logged: list[logging.LogRecord]
) -> None:
    pid = (await user.portfolio(visibility="public"))["id"]
    token = await user.webhook_token(pid)
    asked: list[tuple[User | httpx.AsyncClient, str, str]] = [
        (user, f"/v1/portfolios/{pid}/fills?symbol=BTCUSDT%00", "symbol"),
        (user, f"/v1/order?portfolio_id={pid}&symbol=BTC%00USDT", "symbol"),
        (user, f"/v1/portfolios/{pid}/signals?before_id=%00", "before_id"),
        (anon, "/v1/market/quotes?symbol=%00", "symbol"),
        (anon, "/v1/market/klines?symbol=BTCUSDT%00&interval=1m", "symbol"),
        (anon, "/v1/portfolios/by_code/P%0000001", "path"),
        (anon, "/v1/portfolios/square?sort=%00", "sort"),
        (anon, f"/v1/portfolios/{pid}/ledger?x%00=1", "x?"),
    ]
    for client, url, field in asked:
        _refused(await client.get(url), field)
    hook = await anon.post(f"/webhook/tv/{token}%00", content=b"buy BTCUSDT 0.01")
    _refused(hook, "path")
    assert errors_logged == []


async def test_nul_on_fapi_is_illegal_characters(
    user: User, app: FastAPI, anon: httpx.AsyncClient, errors_logged: list[logging.LogRecord]
) -> None:
    bot = await make_bot(user, anon)
    in_query = await anon.get("/fapi/v1/ticker/price", params={"symbol": f"BTCUSDT{NUL}"})
    in_body = await bot.call(
        "POST",
        "/v1/order",
        {
            "symbol": "BTCUSDT",
            "side": "BUY",
            "type": "MARKET",
            "quantity": "0.01",
            "newClientOrderId": f"a{NUL}",
        },
        in_body=True,
    )
    in_path = await anon.get("/fapi/v1/ticker%00/price")
    for response in (in_query, in_body, in_path):
        assert response.status_code == 400, response.text
        assert response.json()["code"] == -1100
    orders = await user.get("/v1/order", params={"portfolio_id": bot.portfolio_id})
    assert orders.json()["orders"] == []
    assert errors_logged == []


async def test_an_alert_carrying_nul_in_json_is_kept_without_it_breaking(
    user: User, anon: httpx.AsyncClient, errors_logged: list[logging.LogRecord]
) -> None:
    # A webhook body is kept as received; an escaped NUL in a free-text field must not stop it.
    pid = (await user.portfolio())["id"]
    token = await user.webhook_token(pid)
    alert = {"action": "buy", "symbol": "BTCUSDT", "qty": "0.01", "comment": f"x{NUL}y"}
    answer = await anon.post(f"/webhook/tv/{token}", content=orjson.dumps(alert))
    assert answer.status_code == 200, answer.text
    signals = (await user.get(f"/v1/portfolios/{pid}/signals")).json()["signals"]
    assert signals[0]["status"] == "executed"
    assert errors_logged == []


def test_every_request_body_is_a_strict_input(app: FastAPI) -> None:
    # StrictInput is where NUL, surrogates and loose numbers are refused for every field: a body
    # model that does not derive from it would let them through.
    bodies: set[type] = set()
    for context in iter_route_contexts(app.routes):
        route = context.original_route
        if isinstance(route, APIRoute):
            for param in route.dependant.body_params:
                annotation = param.field_info.annotation
                models = [annotation, *getattr(annotation, "__args__", ())]
                bodies.update(m for m in models if isinstance(m, type) and m is not type(None))
    assert bodies, "no JSON bodies found"
    assert all(issubclass(model, StrictInput) for model in bodies), bodies
