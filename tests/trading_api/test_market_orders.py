"""MARKET orders, sizing, validation and margin (trading core points 4, 5, 7)."""

import asyncio
from decimal import Decimal

from fastapi import FastAPI

from tests.conftest import User, bearer, client_for
from tests.trading_api.helpers import equity, market, order, positions, set_price


async def test_market_buy_fills_at_the_mark_with_taker_commission(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    filled = await market(user, portfolio["id"], "BTCUSDT", "buy", "0.01")
    assert filled["status"] == "filled"
    assert filled["avg_price"] == 60000 and filled["filled_quantity"] == 0.01
    assert filled["commission"] == 0.3  # 600 USDT × 0.05 %
    assert filled["size_usd"] == 600
    held = (await positions(user, portfolio["id"]))["BTCUSDT"]
    assert held["side"] == "long" and held["quantity"] == 0.01 and held["entry_price"] == 60000
    account = await equity(user, portfolio["id"])
    assert account["balance"] == 9999.7
    assert account["ledger_balance"] == account["balance"]


async def test_size_usd_is_converted_with_the_mark_and_floored_to_the_step(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "ETHUSDT", "3000")
    portfolio = await user.portfolio()
    filled = await order(
        user,
        portfolio_id=portfolio["id"],
        symbol="ETHUSDT",
        side="sell",
        type="market",
        size_usd="1000",
    )
    assert filled["quantity"] == 0.333  # 1000 / 3000 floored to the 0.001 step
    held = (await positions(user, portfolio["id"]))["ETHUSDT"]
    assert held["side"] == "short" and held["quantity"] == -0.333
    assert held["notional_usd"] == -999


async def test_filters_give_clear_errors_and_never_round(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    base = {"portfolio_id": portfolio["id"], "symbol": "BTCUSDT", "side": "buy"}
    cases = [
        ({"type": "market", "quantity": "0.0015"}, "qty_off_step"),
        ({"type": "limit", "quantity": "0.01", "price": "59000.05"}, "price_off_tick"),
        ({"type": "market", "quantity": "0.001"}, "notional_too_small"),
        ({"type": "market", "quantity": "0.01", "symbol": "NOPEUSDT"}, "invalid_symbol"),
    ]
    for extra, code in cases:
        response = await user.post("/v1/order", json={**base, **extra})
        assert response.status_code == 400, (extra, response.text)
        assert response.json()["error"] == code
        assert response.json()["msg"]
    assert await positions(user, portfolio["id"]) == {}


async def test_bad_order_bodies_are_validation_errors(user: User) -> None:
    portfolio = await user.portfolio()
    base = {"portfolio_id": portfolio["id"], "symbol": "BTCUSDT", "side": "buy", "type": "market"}
    for extra in [
        {},
        {"quantity": "1", "size_usd": "5"},
        {"quantity": "-1"},
        {"quantity": "abc"},
        {"quantity": "1", "price": "5"},
        {"type": "limit", "quantity": "1"},
        {"quantity": "1e400"},
        {"quantity": "NaN"},
        {"side": "up", "quantity": "1"},
    ]:
        response = await user.post("/v1/order", json={**base, **extra})
        assert response.status_code == 422, extra
        assert response.json()["error"] == "validation_error"


async def test_insufficient_margin_is_refused(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio(initial_balance="1000")
    response = await user.post(
        "/v1/order",
        json={
            "portfolio_id": portfolio["id"],
            "symbol": "BTCUSDT",
            "side": "buy",
            "type": "market",
            "quantity": "1",
        },
    )
    assert response.status_code == 400
    assert response.json()["error"] == "insufficient_margin"
    assert (await equity(user, portfolio["id"]))["balance"] == 1000


async def test_close_is_forced_to_reduce_and_capped(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    pid = portfolio["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.02")
    await set_price(app, "BTCUSDT", "61000")
    closed = await order(
        user,
        portfolio_id=pid,
        symbol="BTCUSDT",
        side="buy",
        action="close",
        type="market",
        quantity="0.5",
    )
    assert closed["side"] == "sell" and closed["quantity"] == 0.02
    assert closed["realized_pnl"] == 20  # 0.02 × (61000 − 60000)
    assert await positions(user, pid) == {}
    again = await user.post(
        "/v1/order",
        json={
            "portfolio_id": pid,
            "symbol": "BTCUSDT",
            "action": "close",
            "type": "market",
            "quantity": "0.01",
        },
    )
    assert again.status_code == 400 and again.json()["error"] == "reduce_only_rejected"


async def test_flip_through_zero_realizes_then_opens(user: User, app: FastAPI) -> None:
    await set_price(app, "SOLUSDT", "150")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "SOLUSDT", "buy", "10")
    await set_price(app, "SOLUSDT", "140")
    flip = await market(user, pid, "SOLUSDT", "sell", "25")
    assert flip["realized_pnl"] == -100
    held = (await positions(user, pid))["SOLUSDT"]
    assert held["quantity"] == -15 and held["entry_price"] == 140 and held["side"] == "short"


async def test_average_entry_on_adds(user: User, app: FastAPI) -> None:
    pid = (await user.portfolio())["id"]
    await set_price(app, "ETHUSDT", "3000")
    await market(user, pid, "ETHUSDT", "buy", "1")
    await set_price(app, "ETHUSDT", "3300")
    await market(user, pid, "ETHUSDT", "buy", "2")
    held = (await positions(user, pid))["ETHUSDT"]
    assert held["entry_price"] == 3200 and held["unrealized_pnl"] == 300


async def test_leverage_bounds_and_effect(user: User, app: FastAPI) -> None:
    pid = (await user.portfolio())["id"]
    ok = await user.post(
        f"/v1/portfolios/{pid}/leverage", json={"symbol": "BTCUSDT", "leverage": 5}
    )
    assert ok.status_code == 200 and ok.json()["leverage"] == 5
    too_high = await user.post(
        f"/v1/portfolios/{pid}/leverage", json={"symbol": "DOGEUSDT", "leverage": 125}
    )
    assert too_high.status_code == 400 and too_high.json()["error"] == "invalid_leverage"
    zero = await user.post(
        f"/v1/portfolios/{pid}/leverage", json={"symbol": "BTCUSDT", "leverage": 0}
    )
    assert zero.status_code == 422
    await set_price(app, "BTCUSDT", "60000")
    await market(user, pid, "BTCUSDT", "buy", "0.1")
    held = (await positions(user, pid))["BTCUSDT"]
    assert held["leverage"] == 5 and held["margin"] == 1200


async def test_duplicate_client_order_id_is_refused(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    body = {
        "portfolio_id": pid,
        "symbol": "BTCUSDT",
        "side": "buy",
        "type": "market",
        "quantity": "0.01",
        "client_order_id": "my-id-1",
    }
    assert (await user.post("/v1/order", json=body)).status_code == 201
    again = await user.post("/v1/order", json=body)
    assert again.status_code == 409 and again.json()["error"] == "duplicate_client_order_id"
    # The id is the portfolio's own: other portfolios use it freely, in the same group commit too.
    others = [(await user.portfolio())["id"] for _ in range(2)]
    placed = await asyncio.gather(
        *(user.post("/v1/order", json=body | {"portfolio_id": other}) for other in others)
    )
    assert [r.status_code for r in placed] == [201, 201]


async def test_only_the_owner_with_a_write_credential_trades(
    user: User, user_factory: object, app: FastAPI
) -> None:
    pid = (await user.portfolio())["id"]
    other: User = await user_factory()  # type: ignore[operator]
    body = {
        "portfolio_id": pid,
        "symbol": "BTCUSDT",
        "side": "buy",
        "type": "market",
        "quantity": "0.01",
    }
    stranger = await other.post("/v1/order", json=body)
    assert stranger.status_code == 404 and stranger.json()["error"] == "portfolio_not_found"
    read_key = await user.api_key("read")
    async with client_for(app) as client:
        refused = await client.post("/v1/order", json=body, headers=bearer(read_key))
        assert refused.status_code == 403 and refused.json()["error"] == "read_only_key"
        write_key = await user.api_key("write")
        await set_price(app, "BTCUSDT", "60000")
        placed = await client.post("/v1/order", json=body, headers=bearer(write_key))
        assert placed.status_code == 201 and placed.json()["source"] == "v1"


async def test_concurrent_orders_never_overdraw_margin(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "50000")
    pid = (await user.portfolio(initial_balance="1000"))["id"]
    key = await user.api_key("write")
    body = {
        "portfolio_id": pid,
        "symbol": "BTCUSDT",
        "side": "buy",
        "type": "market",
        "quantity": "0.1",
    }
    # Each needs 5000/20 = 250 USDT margin plus fees: at most three fit in 1000.
    async with client_for(app) as client:
        responses = await asyncio.gather(
            *(client.post("/v1/order", json=body, headers=bearer(key)) for _ in range(10))
        )
    statuses = [r.status_code for r in responses]
    assert statuses.count(201) == 3, statuses
    assert all(
        r.json()["error"] == "insufficient_margin" for r in responses if r.status_code != 201
    )
    account = await equity(user, pid)
    assert Decimal(str(account["available"])) >= 0
    assert (await positions(user, pid))["BTCUSDT"]["quantity"] == 0.3
