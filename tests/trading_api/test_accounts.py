"""Ledger, equity, funding, liquidation, reset and top-up (trading core points 3, 5, 8)."""

from decimal import Decimal

from fastapi import FastAPI

from papertrade.engine import risk, snapshots
from tests.conftest import User, bearer, client_for
from tests.trading_api.helpers import (
    equity,
    limit,
    market,
    order,
    positions,
    set_price,
    until_liquidated,
)


async def test_every_balance_change_is_a_ledger_entry(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.1")
    await set_price(app, "BTCUSDT", "61000")
    await order(
        user, portfolio_id=pid, symbol="BTCUSDT", action="close", type="market", quantity="0.1"
    )
    kinds = [e["kind"] for e in (await user.get(f"/v1/portfolios/{pid}/ledger")).json()]
    assert kinds == ["commission", "realized_pnl", "commission", "deposit"]
    account = await equity(user, pid)
    # 10000 − 3 (open fee) + 100 (pnl) − 3.05 (close fee)
    assert account["balance"] == 10093.95 == account["ledger_balance"]


async def test_equity_is_balance_plus_unrealized(user: User, app: FastAPI) -> None:
    await set_price(app, "ETHUSDT", "3000")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "ETHUSDT", "sell", "2")
    await set_price(app, "ETHUSDT", "2900")
    account = await equity(user, pid)
    assert account["unrealized_pnl"] == 200
    assert account["equity"] == round(account["balance"] + 200, 6)
    assert account["margin_used"] == 290  # 5800 / 20
    assert account["available"] == round(account["equity"] - 290, 6)


async def test_funding_is_charged_once_with_the_right_sign(
    user: User, user_factory: object, app: FastAPI
) -> None:
    await set_price(app, "LINKUSDT", "20")
    long_pid = (await user.portfolio())["id"]
    other: User = await user_factory()  # type: ignore[operator]
    short_pid = (await other.portfolio())["id"]
    await market(user, long_pid, "LINKUSDT", "buy", "100")
    await market(other, short_pid, "LINKUSDT", "sell", "100")
    before_long = (await equity(user, long_pid))["balance"]
    before_short = (await equity(other, short_pid))["balance"]
    ctx = app.state.ctx
    settled = await risk.settle_funding(
        ctx, "LINKUSDT", 1_900_000_000_000, Decimal("0.001"), Decimal("20")
    )
    assert settled >= 2
    again = await risk.settle_funding(
        ctx, "LINKUSDT", 1_900_000_000_000, Decimal("0.001"), Decimal("20")
    )
    assert again == 0
    assert (await equity(user, long_pid))["balance"] == round(
        before_long - 2, 6
    )  # longs pay 2000 × 0.1 %
    assert (await equity(other, short_pid))["balance"] == round(before_short + 2, 6)
    entry = (await user.get(f"/v1/portfolios/{long_pid}/ledger")).json()[0]
    assert entry["kind"] == "funding" and entry["amount"] == -2


async def test_underwater_portfolio_is_liquidated_at_the_mark(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio(initial_balance="500"))["id"]
    await user.post(f"/v1/portfolios/{pid}/leverage", json={"symbol": "BTCUSDT", "leverage": 50})
    await market(user, pid, "BTCUSDT", "buy", "0.3")
    resting = await limit(user, pid, "buy", "0.01", "50000")
    liquidation_price = (await positions(user, pid))["BTCUSDT"]["liquidation_price"]
    assert 58000 < liquidation_price < 60000
    await set_price(app, "BTCUSDT", str(int(liquidation_price) - 50))
    await until_liquidated(app, pid)
    assert await positions(user, pid) == {}
    fills = (await user.get(f"/v1/portfolios/{pid}/fills")).json()
    assert fills[0]["is_liquidation"] is True and fills[0]["side"] == "sell"
    assert (await user.get(f"/v1/order/{resting['id']}")).json()["status"] == "canceled"
    kinds = {e["kind"] for e in (await user.get(f"/v1/portfolios/{pid}/ledger")).json()}
    assert "liquidation" in kinds
    account = await equity(user, pid)
    assert account["ledger_balance"] == account["balance"]


async def test_healthy_portfolio_is_not_liquidated(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.01")
    await set_price(app, "BTCUSDT", "59000")
    assert pid not in await risk.liquidate_underwater(app.state.ctx)
    assert "BTCUSDT" in await positions(user, pid)


async def test_reset_and_top_up_keep_keys(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio())["id"]
    key = await user.api_key("write")
    await market(user, pid, "BTCUSDT", "buy", "0.05")
    await limit(user, pid, "buy", "0.01", "50000")
    topped = await user.post(f"/v1/portfolios/{pid}/top-up", json={"amount": "500.5"})
    assert topped.status_code == 200
    reset = await user.post(f"/v1/portfolios/{pid}/reset")
    assert reset.status_code == 200 and reset.json()["balance"] == 10000
    assert await positions(user, pid) == {}
    open_orders = (
        await user.get("/v1/order", params={"portfolio_id": pid, "status": "open"})
    ).json()
    assert open_orders["orders"] == []
    kinds = [e["kind"] for e in (await user.get(f"/v1/portfolios/{pid}/ledger")).json()][:2]
    assert kinds == ["reset", "top_up"]
    async with client_for(app) as client:
        after = await client.get(f"/v1/portfolios/{pid}/equity", headers=bearer(key))
    assert after.status_code == 200 and after.json()["ledger_balance"] == 10000
    bad = await user.post(f"/v1/portfolios/{pid}/top-up", json={"amount": "-1"})
    assert bad.status_code == 422


async def test_equity_curve_records_snapshots(user: User, app: FastAPI) -> None:
    pid = (await user.portfolio())["id"]
    assert await snapshots.record_snapshots(app.state.ctx) >= 1
    curve = (await user.get(f"/v1/portfolios/{pid}/equity-curve")).json()
    assert curve[-1]["equity"] == 10000 and isinstance(curve[-1]["time"], int)
