"""Alerts on a hedge-mode portfolio: each command trades the position side it names or implies,
so a `buy` never closes the short, `close_long` leaves the short (and its stop) alone, `close`
closes both sides, `reverse` closes one side and opens the other, and a target position is
reached on its side with the other side closed."""

from typing import Any

from fastapi import FastAPI

from tests.conftest import User
from tests.trading_api.helpers import set_price
from tests.webhooks.helpers import Hook


async def hedged(app: FastAPI, user: User) -> Hook:
    await set_price(app, "BTCUSDT", "50000")
    hook = await Hook.create(app, user)
    mode = await user.client.put(
        f"/v1/portfolios/{hook.portfolio_id}/position-mode",
        json={"hedge": True},
        headers=user.write_headers(),
    )
    assert mode.status_code == 200, mode.text
    return hook


async def sides(hook: Hook) -> dict[str, float]:
    """The open positions by side: {"LONG": 0.01, "SHORT": -0.02}."""
    listed = await hook.user.get(f"/v1/portfolios/{hook.portfolio_id}/positions")
    assert listed.status_code == 200, listed.text
    return {p["position_side"]: float(p["quantity"]) for p in listed.json() if p["quantity"]}


async def stops(hook: Hook) -> list[dict[str, Any]]:
    listed = await hook.user.get(
        "/v1/conditional-order", params={"portfolio_id": hook.portfolio_id, "status": "all"}
    )
    assert listed.status_code == 200, listed.text
    return list(listed.json()["conditional_orders"])


async def test_buy_and_sell_hold_both_sides_and_close_long_leaves_the_short(
    app: FastAPI, user: User
) -> None:
    hook = await hedged(app, user)
    await hook.ok("buy BTCUSDT 0.01 sl=48000")
    await hook.ok("sell BTCUSDT 0.02 sl=52000")
    assert await sides(hook) == {"LONG": 0.01, "SHORT": -0.02}  # the sell did not flip the long
    by_side = {s["position_side"]: s for s in await stops(hook)}
    assert (by_side["LONG"]["side"], by_side["SHORT"]["side"]) == ("sell", "buy")

    answer = await hook.ok("close_long BTCUSDT")
    assert [(o["side"], o["action"]) for o in answer["orders"]] == [("sell", "close")]
    assert "cancelled 1 waiting stop/take-profit order(s)" in answer["msg"]
    assert await sides(hook) == {"SHORT": -0.02}
    status = {s["position_side"]: s["status"] for s in await stops(hook)}
    assert status == {"LONG": "canceled", "SHORT": "new"}  # the short is still protected


async def test_close_closes_each_open_side(app: FastAPI, user: User) -> None:
    hook = await hedged(app, user)
    await hook.ok("buy BTCUSDT 0.01")
    await hook.ok("sell BTCUSDT 0.03")
    answer = await hook.ok("close BTCUSDT")
    assert sorted((o["side"], o["quantity"]) for o in answer["orders"]) == [
        ("buy", 0.03),
        ("sell", 0.01),
    ]
    assert await sides(hook) == {}
    again = await hook.ok("exit BTCUSDT")  # another text: a re-sent one is a duplicate
    assert again["status"] == "ignored" and "flat" in again["msg"]


async def test_reverse_closes_the_side_and_opens_the_other(app: FastAPI, user: User) -> None:
    hook = await hedged(app, user)
    await hook.ok("buy BTCUSDT 0.02")
    answer = await hook.ok("reverse BTCUSDT")
    assert [(o["side"], o["action"], o["quantity"]) for o in answer["orders"]] == [
        ("sell", "close", 0.02),
        ("sell", "open", 0.02),
    ]
    assert await sides(hook) == {"SHORT": -0.02}
    await hook.ok("buy BTCUSDT 0.01")  # now both sides: which one reverse means is unclear
    refused = await hook.refused("flip BTCUSDT", 422)  # reverse again (a new text)
    assert "held long and short" in refused["msg"] and "close_long" in refused["msg"]
    assert await sides(hook) == {"LONG": 0.01, "SHORT": -0.02}  # nothing was half done


async def test_a_target_position_closes_the_other_side(app: FastAPI, user: User) -> None:
    hook = await hedged(app, user)
    await hook.ok("buy BTCUSDT 0.01")
    await hook.ok("sell BTCUSDT 0.02")
    await hook.ok({"action": "buy", "symbol": "BTCUSDT", "position": "long", "position_size": 0.03})
    assert await sides(hook) == {"LONG": 0.03}
    await hook.ok({"action": "sell", "symbol": "BTCUSDT", "position_size": -0.01})
    assert await sides(hook) == {"SHORT": -0.01}
    await hook.ok({"action": "sell", "symbol": "BTCUSDT", "position": "flat"})
    assert await sides(hook) == {}
