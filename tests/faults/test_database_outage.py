"""PostgreSQL going away under a running service (a proxy the test cuts): 503 in each surface's
shape with Retry-After, "not executed" unless a commit's outcome is unknown, one warning line
each way instead of a traceback per request, and no failed request once it is back."""

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.conftest import bearer, client_for, running_app, sign_up
from tests.fapi.helpers import make_bot
from tests.faults.helpers import postgres_behind_proxy
from tests.liveserver import live_server
from tests.trading_api.helpers import set_price
from tests.ws.helpers import ws_url

# opens databases of its own (tests/databases.py)
pytestmark = pytest.mark.database


def _market_order(pid: int, client_order_id: str) -> dict[str, Any]:
    return {
        "portfolio_id": pid,
        "symbol": "BTCUSDT",
        "side": "buy",
        "type": "market",
        "quantity": "0.01",
        "client_order_id": client_order_id,
    }


def _fault_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "papertrade.faults"]


async def test_an_outage_answers_503_and_the_first_requests_after_it_succeed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    name = f"papertrade_fault_db_{uuid.uuid4().hex[:8]}"
    async with (
        postgres_behind_proxy(name, tmp_path) as (settings, proxy),
        running_app(settings) as app,
        client_for(app) as client,
    ):
        user = await sign_up(app)
        pid = (await user.portfolio())["id"]
        key = await user.api_key()
        bot = await make_bot(user, client)
        await set_price(app, "BTCUSDT", "60000")
        placed = await client.post(
            "/v1/order", json=_market_order(pid, "before"), headers=bearer(key)
        )
        assert placed.status_code == 201, placed.text
        caplog.clear()
        caplog.set_level(logging.WARNING)

        proxy.cut()
        answers = []
        for n in range(5):  # a cached key: the order reaches the writer, which fails
            body = _market_order(pid, f"during-{n}")
            answers.append(await client.post("/v1/order", json=body, headers=bearer(key)))
        unknown_key = await client.get("/v1/portfolios/my", headers=bearer("pt_unknownkey"))
        listed = await client.get(f"/v1/portfolios/{pid}", headers=bearer(key))
        compatible = await bot.call(
            "POST",
            "/v1/order",
            {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"},
        )
        health = await client.get("/healthz")
        async with live_server(app) as url:
            with pytest.raises(InvalidStatus) as refused:
                async with connect(ws_url(url), additional_headers=bearer("pt_unknownkey")):
                    pass
        assert refused.value.response.status_code == 503
        assert b"service_unavailable" in refused.value.response.body

        for answer in [*answers, unknown_key, listed]:
            assert answer.status_code == 503, answer.text
            assert answer.headers["Retry-After"].isdigit()
            assert answer.json()["error"] == "service_unavailable"
        assert all("not executed" in a.json()["msg"] for a in answers)
        assert compatible.status_code == 503 and compatible.headers["Retry-After"]
        assert compatible.json()["code"] == -1001  # ccxt: OperationFailed, retried
        assert "not executed" in compatible.json()["msg"]
        assert health.status_code == 503 and health.json()["database"] != "ok"

        proxy.restore()
        # The pooled connections died with the database: none of these may fail.
        for n in range(5):
            body = _market_order(pid, f"after-{n}")
            again = await client.post("/v1/order", json=body, headers=bearer(key))
            assert again.status_code == 201, again.text
        assert (await client.get("/healthz")).status_code == 200
        for _ in range(300):  # "back" is said once nothing has failed for a second
            if any("available again" in line for line in _fault_lines(caplog)):
                break
            await asyncio.sleep(0.1)
            await client.get("/healthz")

        orders = await client.get("/v1/order", params={"portfolio_id": pid}, headers=bearer(key))
        placed_ids = {o["client_order_id"] for o in orders.json()["orders"]}
        assert placed_ids == {"before", *(f"after-{n}" for n in range(5))}  # none "during"

    lines = _fault_lines(caplog)
    assert [line.split(":")[0] for line in lines] == [
        "database unavailable",
        "database available again (it was",
    ], lines
    tracebacks = [r for r in caplog.records if r.exc_info and r.name.startswith("papertrade.")]
    request_tracebacks = [
        r for r in tracebacks if r.name in {"papertrade.errors", "papertrade.orders.writer"}
    ]
    assert request_tracebacks == []


async def test_a_commit_whose_answer_is_lost_says_unknown_and_is_found_afterwards(
    tmp_path: Path,
) -> None:
    name = f"papertrade_fault_commit_{uuid.uuid4().hex[:8]}"
    async with (
        postgres_behind_proxy(name, tmp_path) as (settings, proxy),
        running_app(settings) as app,
        client_for(app) as client,
    ):
        user = await sign_up(app)
        pid = (await user.portfolio())["id"]
        key = await user.api_key()
        await set_price(app, "BTCUSDT", "60000")
        coid = f"lost-answer-{uuid.uuid4().hex[:6]}"
        proxy.break_on_commit_after(coid.encode())
        answer = await client.post("/v1/order", json=_market_order(pid, coid), headers=bearer(key))
        assert proxy.broken_commits == 1
        assert answer.status_code == 503 and answer.headers["Retry-After"]
        assert answer.json()["error"] == "service_unavailable"
        assert "unknown" in answer.json()["msg"] and "client order id" in answer.json()["msg"]

        # The server did commit it: it is there once, and placing it again is refused.
        orders = await client.get("/v1/order", params={"portfolio_id": pid}, headers=bearer(key))
        found = [o for o in orders.json()["orders"] if o["client_order_id"] == coid]
        assert len(found) == 1 and found[0]["status"] == "filled"
        again = await client.post("/v1/order", json=_market_order(pid, coid), headers=bearer(key))
        assert (again.status_code, again.json()["error"]) == (409, "duplicate_client_order_id")

        # The same on /fapi: Binance's "execution status unknown" (ccxt: RequestTimeout).
        bot = await make_bot(user, client)
        fapi_coid = f"lost-fapi-{uuid.uuid4().hex[:6]}"
        proxy.break_on_commit_after(fapi_coid.encode())
        params = {"symbol": "BTCUSDT", "side": "BUY", "type": "MARKET", "quantity": "0.01"}
        lost = await bot.call("POST", "/v1/order", {**params, "newClientOrderId": fapi_coid})
        assert proxy.broken_commits == 2
        assert (lost.status_code, lost.json()["code"]) == (503, -1007)
        assert lost.headers["Retry-After"]
        found_fapi = await bot.call(
            "GET", "/v1/order", {"symbol": "BTCUSDT", "origClientOrderId": fapi_coid}
        )
        assert found_fapi.json()["status"] == "FILLED"
