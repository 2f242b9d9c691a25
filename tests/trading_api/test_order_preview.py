"""POST /v1/order/preview: what the web ticket shows before sending is what the order path does."""

from collections.abc import Callable
from decimal import Decimal
from typing import Any

from fastapi import FastAPI

from tests.conftest import User
from tests.trading_api.helpers import order, positions, set_price


async def _preview(user: User, **body: object) -> dict[str, object]:
    response = await user.post("/v1/order/preview", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_the_preview_matches_the_order_then_placed(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    seen = await _preview(user, portfolio_id=pid, symbol="BTCUSDT", side="buy", size_usd="1000")
    assert seen["quantity"] == 0.016  # 1000 / 60000 = 0.01666…, floored to the 0.001 step
    assert seen["notional"] == 960
    assert seen["leverage"] == 20 and seen["initial_margin"] == 48
    assert seen["fee"] == 0.48 and seen["liquidity"] == "taker"
    assert seen["problems"] == []
    filled = await order(
        user, portfolio_id=pid, symbol="BTCUSDT", side="buy", type="market", size_usd="1000"
    )
    assert Decimal(str(filled["quantity"])) == Decimal("0.016")
    assert Decimal(str(filled["commission"])) == Decimal("0.48")
    held = (await positions(user, pid))["BTCUSDT"]
    # The preview's liquidation estimate is the position's own once filled at that price.
    assert seen["liquidation_price"] == held["liquidation_price"]


async def test_the_preview_states_the_minimum_and_why_it_would_be_refused(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio(initial_balance="100"))["id"]
    tiny = await _preview(user, portfolio_id=pid, symbol="BTCUSDT", side="buy", quantity="0.001")
    assert tiny["min_quantity"] == 0.002 and tiny["min_notional"] == 120  # min notional 100 USDT
    assert str(tiny["minimum"]).startswith("min 0.002 BTC ≈ 120.00 USDT at 60000")
    assert any("Below the minimum order" in p for p in tiny["problems"])  # type: ignore[attr-defined]
    big = await _preview(user, portfolio_id=pid, symbol="BTCUSDT", side="buy", size_usd="50000")
    assert any("is available" in p for p in big["problems"])  # type: ignore[attr-defined]
    closing = await _preview(user, portfolio_id=pid, symbol="BTCUSDT", action="close", quantity="1")
    assert closing["problems"] == ["There is no BTCUSDT position to close."]


async def test_a_stranger_cannot_preview_on_my_portfolio(
    user: User, user_factory: Callable[..., Any]
) -> None:
    stranger = await user_factory()
    pid = (await user.portfolio())["id"]
    body = {"portfolio_id": pid, "symbol": "BTCUSDT", "side": "buy", "quantity": "0.01"}
    response = await stranger.post("/v1/order/preview", json=body)
    assert response.status_code == 404 and response.json()["error"] == "portfolio_not_found"
    bad = await user.post("/v1/order/preview", json=body | {"symbol": "NOPE"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_symbol", bad.text


async def test_the_preview_follows_isolated_margin_and_hedge_mode(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    put = await user.client.put(
        f"/v1/portfolios/{pid}/margin-type",
        json={"symbol": "BTCUSDT", "margin_type": "isolated"},
        headers=user.write_headers(),
    )
    assert put.status_code == 200, put.text
    body = {"portfolio_id": pid, "symbol": "BTCUSDT", "side": "buy", "quantity": "0.1"}
    seen = await _preview(user, **body)
    await order(user, type="market", **body)
    held = (await positions(user, pid))["BTCUSDT"]
    # Isolated: liquidated on its own margin (300 USDT), far above a cross estimate on 10,000.
    assert seen["liquidation_price"] == held["liquidation_price"]
    assert Decimal(str(seen["liquidation_price"])) > Decimal("57000")

    hedged = (await user.portfolio())["id"]
    mode = await user.client.put(
        f"/v1/portfolios/{hedged}/position-mode", json={"hedge": True}, headers=user.write_headers()
    )
    assert mode.status_code == 200, mode.text
    short = {"portfolio_id": hedged, "symbol": "BTCUSDT", "side": "sell", "quantity": "0.1"}
    await order(user, type="market", **short)
    # A buy in hedge mode opens the LONG side: the SHORT held is not what it would close.
    long = await _preview(user, **(short | {"side": "buy"}))
    assert long["problems"] == [] and long["side"] == "buy"
    assert long["quantity"] == 0.1 and long["initial_margin"] == 300  # it opens, at 20×
    # Long and short of one size hedge each other: no price liquidates the pair.
    assert long["liquidation_price"] is None
