"""Copy trading through /v1/copy/*: a leader's fills mirrored into a follower's portfolio by
the outbox consumer, sized by the mode, closed proportionally, skipped with a reason."""

from decimal import Decimal

from fastapi import FastAPI

from tests.conftest import User
from tests.copytrading.helpers import follow, leader_and_follower, position_qty, trades
from tests.trading_api.helpers import market, set_price


async def test_fixed_amount_copies_opens_and_closes_proportionally(
    app: FastAPI, user_factory: object
) -> None:
    leader: User = await user_factory()  # type: ignore[operator]
    follower: User = await user_factory()  # type: ignore[operator]
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "BTCUSDT", "50000")
    before = await market(leader, led["id"], "BTCUSDT", "buy", "0.01")  # not copied: before
    relation = await follow(
        follower,
        led["id"],
        mine["id"],
        mode="fixed_amount",
        amount=100,
        allocation=1000,
        leverage=10,
    )
    assert relation["status"] == "active" and relation["profit_share_pct"] == 10
    opened = await market(leader, led["id"], "BTCUSDT", "buy", "0.01")
    (copy,) = await trades(follower, relation["id"], 1)
    # 100 USDT of margin at 10x is 1,000 USDT of BTC at 50,000: 0.02 BTC.
    assert copy["leader_order_id"] == opened["id"] != before["id"]
    assert copy["status"] == "copied" and copy["leg"] == "open"
    assert Decimal(str(copy["quantity"])) == Decimal("0.02")
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal("0.02")
    order = (await follower.get(f"/v1/order/{copy['follower_order_id']}")).json()
    assert order["side"] == "buy" and order["portfolio_id"] == mine["id"]

    # The leader held 0.02 and sells 0.005: a quarter closed, so the follower closes a quarter.
    await market(leader, led["id"], "BTCUSDT", "sell", "0.005")
    rows = await trades(follower, relation["id"], 2)
    assert rows[1]["leg"] == "close" and rows[1]["status"] == "copied"
    assert Decimal(str(rows[1]["quantity"])) == Decimal("0.005")
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal("0.015")


async def test_multiplier_and_symbol_allow_list_and_pause(
    app: FastAPI, user_factory: object
) -> None:
    leader: User = await user_factory()  # type: ignore[operator]
    follower: User = await user_factory()  # type: ignore[operator]
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "BTCUSDT", "50000")
    await set_price(app, "ETHUSDT", "3000")
    relation = await follow(
        follower,
        led["id"],
        mine["id"],
        mode="multiplier",
        multiplier=2,
        allocation=1000,
        symbols=["BTCUSDT"],
    )
    await market(leader, led["id"], "ETHUSDT", "buy", "0.1")
    await market(leader, led["id"], "BTCUSDT", "sell", "0.003")
    rows = await trades(follower, relation["id"], 2)
    assert rows[0]["status"] == "skipped" and rows[0]["reason"] == "symbol"
    assert rows[1]["status"] == "copied"
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal("-0.006")

    paused = await follower.post(f"/v1/copy/relations/{relation['id']}/pause")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    await market(leader, led["id"], "BTCUSDT", "sell", "0.002")  # a new open: not copied
    await market(leader, led["id"], "BTCUSDT", "buy", "0.005")  # a full close: still mirrored
    rows = await trades(follower, relation["id"], 4)
    assert (rows[2]["status"], rows[2]["reason"]) == ("skipped", "paused")
    assert (rows[3]["leg"], rows[3]["status"]) == ("close", "copied")
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal(0)
    resumed = await follower.post(f"/v1/copy/relations/{relation['id']}/resume")
    assert resumed.json()["status"] == "active"


async def test_slippage_cap_skips_an_open_the_price_ran_away_from(
    app: FastAPI, user_factory: object
) -> None:
    leader: User = await user_factory()  # type: ignore[operator]
    follower: User = await user_factory()  # type: ignore[operator]
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "BTCUSDT", "50000")
    relation = await follow(
        follower,
        led["id"],
        mine["id"],
        mode="fixed_amount",
        amount=50,
        allocation=500,
        slippage_pct="0.1",
    )
    # Hold the mirror back by moving the price between the leader's fill and its copy: the
    # consumer reads the mark when it runs, so pin it before the outbox is delivered.
    dispatcher = app.state.outbox
    await dispatcher.follow()
    try:
        await market(leader, led["id"], "BTCUSDT", "buy", "0.002")
        await set_price(app, "BTCUSDT", "50100")  # 0.2 % worse for a buyer: above the 0.1 % cap
    finally:
        await dispatcher.lead()
    (row,) = await trades(follower, relation["id"], 1)
    assert (row["status"], row["reason"]) == ("skipped", "slippage")
    assert row["follower_order_id"] is None
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal(0)


async def test_margin_and_min_qty_skips_are_recorded(app: FastAPI, user_factory: object) -> None:
    leader: User = await user_factory()  # type: ignore[operator]
    follower: User = await user_factory()  # type: ignore[operator]
    led = await leader.portfolio(name="lead", visibility="public", initial_balance="10000")
    poor = await follower.portfolio(name="poor", initial_balance="20")
    await set_price(app, "BTCUSDT", "50000")
    relation = await follow(
        follower,
        led["id"],
        poor["id"],
        mode="multiplier",
        multiplier="0.1",
        allocation=10,
        leverage=1,
    )
    # 0.1 × 0.002 is below the minimum: raised to 0.002 (100 USDT notional), which 20 USDT of
    # margin at 1x cannot carry: a min_qty skip. 0.1 × 0.3 = 0.03 BTC is plainly too much margin.
    await market(leader, led["id"], "BTCUSDT", "buy", "0.002")
    await market(leader, led["id"], "BTCUSDT", "buy", "0.3")
    rows = await trades(follower, relation["id"], 2)
    assert [(r["status"], r["reason"]) for r in rows] == [
        ("skipped", "min_qty"),
        ("skipped", "margin"),
    ]


async def test_follow_rules(app: FastAPI, user_factory: object) -> None:
    leader: User = await user_factory()  # type: ignore[operator]
    follower: User = await user_factory()  # type: ignore[operator]
    led, mine = await leader_and_follower(leader, follower)
    private = await leader.portfolio(name="private")
    body = {"mode": "fixed_ratio", "allocation": 100, "portfolio_id": mine["id"]}
    hidden = await follower.post(
        "/v1/copy/relations", json={**body, "leader_portfolio_id": private["id"]}
    )
    assert hidden.status_code == 404 and hidden.json()["error"] == "portfolio_not_found"
    small = await follower.post(
        "/v1/copy/relations", json={**body, "leader_portfolio_id": led["id"], "allocation": 5}
    )
    assert small.status_code == 422 and set(small.json()) == {"error", "msg"}
    needs = await follower.post(
        "/v1/copy/relations",
        json={**body, "leader_portfolio_id": led["id"], "mode": "multiplier"},
    )
    assert needs.status_code == 422 and "multiplier" in needs.json()["msg"]
    made = await follow(follower, led["id"], mine["id"], mode="fixed_ratio", allocation=100)
    again = await follower.post(
        "/v1/copy/relations", json={**body, "leader_portfolio_id": led["id"]}
    )
    assert again.status_code == 409 and again.json()["error"] == "copy_exists"
    # The leader sees the relation; a stranger does not; only the follower changes it.
    assert (await leader.get(f"/v1/copy/relations/{made['id']}")).status_code == 200
    assert (await leader.post(f"/v1/copy/relations/{made['id']}/pause")).status_code == 404
    listed = await follower.get("/v1/copy/relations")
    assert [r["id"] for r in listed.json()] == [made["id"]]


async def test_fixed_ratio_sizes_the_worked_example(app: FastAPI, user_factory: object) -> None:
    leader: User = await user_factory()  # type: ignore[operator]
    follower: User = await user_factory()  # type: ignore[operator]
    led, mine = await leader_and_follower(leader, follower, balance="10002.5")
    await set_price(app, "BTCUSDT", "50000")
    relation = await follow(
        follower,
        led["id"],
        mine["id"],
        mode="fixed_ratio",
        allocation=2000,
        leverage=10,
    )
    await market(leader, led["id"], "BTCUSDT", "buy", "0.1")
    # docs/social.md: 0.1 BTC at 50,000 at the leader's 20x is 250 of margin; the 2.5 taker
    # fee leaves a balance of 10,000, so the order put 2.5 % of it in. 2.5 % of the 2,000
    # allocation at 10x at 50,000 is 0.01 BTC.
    leader_side = (await leader.get(f"/v1/portfolios/{led['id']}")).json()
    assert Decimal(str(leader_side["balance"])) == Decimal(10000)
    (copy,) = await trades(follower, relation["id"], 1)
    assert (copy["status"], copy["leg"]) == ("copied", "open")
    assert Decimal(str(copy["quantity"])) == Decimal("0.01")
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal("0.01")
    order = (await follower.get(f"/v1/order/{copy['follower_order_id']}")).json()
    assert Decimal(str(order["filled_quantity"])) == Decimal("0.01")
