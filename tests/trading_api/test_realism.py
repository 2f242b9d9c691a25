"""Realism profiles through /v1: the default fills at the mark as before, "realistic" slips
takers and fills large resting limits in parts; every fill explains its price (issue 21 item 6)."""

from decimal import Decimal
from typing import Any

from fastapi import FastAPI

from tests.conftest import User
from tests.trading_api.helpers import limit, market, set_price, wait_for_status


async def _fills(user: User, pid: int) -> list[dict[str, Any]]:
    response = await user.get(f"/v1/portfolios/{pid}/fills")
    assert response.status_code == 200, response.text
    return list(response.json())


async def test_the_default_profile_fills_at_the_mark_and_says_so(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio()
    assert portfolio["realism"] == "mark"
    pid = portfolio["id"]
    assert (await user.get(f"/v1/portfolios/{pid}")).json()["realism"] == "mark"
    await market(user, pid, "BTCUSDT", "buy", "0.05")
    (fill,) = await _fills(user, pid)
    assert fill["price"] == 60000 and fill["mark_price"] == 60000
    assert fill["price_source"] == "mark" and fill["liquidity"] == "taker"
    assert fill["slippage_bps"] == 0 and fill["slippage"] == 0
    assert fill["fee_rate"] == "0.0005" and fill["latency_ms"] == 0
    assert fill["commission"] == 1.5  # 3,000 × 0.05 %, as before


async def test_a_realistic_market_order_pays_square_root_slippage(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    portfolio = await user.portfolio(realism="realistic", initial_balance=1_000_000)
    assert portfolio["realism"] == "realistic"
    pid = portfolio["id"]
    bought = await market(user, pid, "BTCUSDT", "buy", "10")
    # 600,000 USDT against 2,000,000 of depth: 10 × sqrt(0.3) = 5.477 bps, 60032.86 → 60032.9.
    assert bought["avg_price"] == 60032.9
    (fill,) = await _fills(user, pid)
    assert fill["price_source"] == "mark" and fill["mark_price"] == 60000
    assert fill["slippage_bps"] == 5.48 and fill["slippage"] == 329  # 32.9 × 10
    assert fill["latency_ms"] == 50 and fill["fee_rate"] == "0.0005"
    assert fill["commission"] == float(Decimal("600329") * Decimal("0.0005"))
    sold = await market(user, pid, "BTCUSDT", "sell", "10")
    assert sold["avg_price"] == 59967.1  # the mark minus the same slippage, rounded down
    last = (await _fills(user, pid))[0]
    assert last["slippage"] == 329 and last["realized_pnl"] == -658


async def test_the_profile_is_changed_with_patch_and_checked(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio(initial_balance=1_000_000))["id"]
    await market(user, pid, "BTCUSDT", "buy", "10")
    changed = await user.patch(f"/v1/portfolios/{pid}", json={"realism": "realistic"})
    assert changed.status_code == 200 and changed.json()["realism"] == "realistic"
    assert (await user.get(f"/v1/portfolios/{pid}")).json()["realism"] == "realistic"
    await market(user, pid, "BTCUSDT", "sell", "10")
    newest, first = await _fills(user, pid)
    assert first["price"] == 60000 and newest["price"] == 59967.1
    for bad in ("fast", 3, None, "MARK"):
        refused = await user.patch(f"/v1/portfolios/{pid}", json={"realism": bad})
        if bad is None:  # null leaves it as it is
            assert refused.status_code == 200 and refused.json()["realism"] == "realistic"
            continue
        assert refused.status_code == 422, bad
        assert set(refused.json()) == {"error", "msg"}
    created = await user.post("/v1/portfolios", json={"name": "x", "realism": "slow"})
    assert created.status_code == 422 and set(created.json()) == {"error", "msg"}


async def test_a_large_resting_limit_fills_in_parts_against_the_depth(
    user: User, app: FastAPI
) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio(realism="realistic", initial_balance=1_000_000))["id"]
    resting = await limit(user, pid, "buy", "40", "59000")
    await set_price(app, "BTCUSDT", "58900")
    # Each crossing tick (the simulation ticks every 100 ms at the pinned price) fills at most
    # 2,000,000 USDT of depth at 59,000: 33.898, then the rest, which kept resting meanwhile.
    done = await wait_for_status(user, resting["id"], "filled")
    assert done["filled_quantity"] == 40 and done["avg_price"] == 59000
    second, first = await _fills(user, pid)
    assert (first["quantity"], second["quantity"]) == (33.898, 6.102)
    assert first["order_id"] == second["order_id"] == resting["id"]
    assert first["price_source"] == second["price_source"] == "limit"
    assert first["price"] == second["price"] == 59000
    assert first["mark_price"] == second["mark_price"] == 58900
    assert first["slippage"] == 0 and first["fee_rate"] == "0.0002"
    assert first["liquidity"] == "maker"


async def test_the_mark_profile_fills_the_same_limit_at_once(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio(initial_balance=1_000_000))["id"]
    resting = await limit(user, pid, "buy", "40", "59000")
    await set_price(app, "BTCUSDT", "58900")
    done = await wait_for_status(user, resting["id"], "filled")
    assert done["filled_quantity"] == 40
    (fill,) = await _fills(user, pid)
    assert fill["price_source"] == "limit" and fill["mark_price"] == 58900


async def test_the_rest_of_a_partly_filled_limit_keeps_resting(user: User, app: FastAPI) -> None:
    await set_price(app, "BTCUSDT", "60000")
    pid = (await user.portfolio(realism="realistic", initial_balance=5_000_000))["id"]
    resting = await limit(user, pid, "buy", "400", "59000")  # twelve crossings' worth
    await set_price(app, "BTCUSDT", "58900")  # the engine has filled this tick on return
    await set_price(app, "BTCUSDT", "60000")
    part = (await user.get(f"/v1/order/{resting['id']}")).json()
    assert part["status"] == "partially_filled"
    crossings = Decimal(str(part["filled_quantity"])) / Decimal("33.898")
    assert crossings == crossings.to_integral_value() and 1 <= crossings < 12
    listed = (await user.get("/v1/order", params={"portfolio_id": pid, "status": "open"})).json()
    assert [o["id"] for o in listed["orders"]] == [resting["id"]]
    await set_price(app, "BTCUSDT", "58800")
    done = await wait_for_status(user, resting["id"], "filled", within=60)
    assert done["filled_quantity"] == 400 and done["avg_price"] == 59000
    fills = await _fills(user, pid)
    assert len(fills) == 12 and {f["price"] for f in fills} == {59000}
    assert sum(Decimal(str(f["quantity"])) for f in fills) == 400
