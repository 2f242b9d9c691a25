"""Copies mirror the leader's position, not the arithmetic of its fills (docs/social.md,
"How a copy is sized"): after any burst of concurrent leader orders, once the mirror has
drained, each follower holds the leader's position × its ratio in every symbol, within one lot
step, never on the other side, and nothing while the leader is flat."""

import asyncio
import random
from decimal import Decimal
from typing import Any

from fastapi import FastAPI

from tests.conftest import User
from tests.copytrading.helpers import follow, leader_and_follower, position_qty
from tests.trading_api.helpers import market, set_price

STEP = Decimal("0.001")  # BTCUSDT's and ETHUSDT's lot step
# The leader's orders come in units whose halves still clear each symbol's minimum notional
# (BTC 100 USDT at 50,000: 0.002; ETH 20 USDT at 3,000: 0.007), so every copy is placeable.
UNIT = {"BTCUSDT": Decimal("0.004"), "ETHUSDT": Decimal("0.016")}


async def mirrored(user: User, relation_id: int) -> set[int]:
    """The leader orders the relation has a copy trade (copied or skipped) for."""
    seen: set[int] = set()
    before: int | None = None
    while True:
        query = "?limit=200" + (f"&before_id={before}" if before else "")
        response = await user.get(f"/v1/copy/relations/{relation_id}/trades{query}")
        assert response.status_code == 200, response.text
        rows = response.json()
        seen |= {row["leader_order_id"] for row in rows}
        if len(rows) < 200:
            return seen
        before = rows[-1]["id"]


async def drained(user: User, relation_id: int, orders: set[int], within: float = 30) -> None:
    """Until every leader order of `orders` has been mirrored for the relation."""
    deadline = asyncio.get_running_loop().time() + within
    while not orders <= (seen := await mirrored(user, relation_id)):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"relation {relation_id} never mirrored {orders - seen}")
        await asyncio.sleep(0.05)


async def test_closing_a_third_leaves_the_follower_at_the_leader_times_the_ratio(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "BTCUSDT", "50000")
    relation = await follow(
        follower, led["id"], mine["id"], mode="multiplier", multiplier=1, allocation=1000
    )
    opened = await market(leader, led["id"], "BTCUSDT", "buy", "0.03")
    await drained(follower, relation["id"], {opened["id"]})
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal("0.03")
    # A third of 0.03 is 0.01: the follower ends at exactly 0.02 (a proportional close of
    # 0.03 × 0.333… floored to the step closed 0.009 and left 0.021).
    third = await market(leader, led["id"], "BTCUSDT", "sell", "0.01")
    await drained(follower, relation["id"], {third["id"]})
    assert await position_qty(leader, led["id"], "BTCUSDT") == Decimal("0.02")
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal("0.02")
    rest = await market(leader, led["id"], "BTCUSDT", "sell", "0.02")
    await drained(follower, relation["id"], {rest["id"]})
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal(0)


async def _burst(leader: User, portfolio: int, plan: list[tuple[str, str, Decimal]]) -> set[int]:
    """The leader's orders of `plan`, all sent at once; the ids of those that filled."""
    answers = await asyncio.gather(
        *(
            leader.post(
                "/v1/order",
                json={
                    "portfolio_id": portfolio,
                    "symbol": symbol,
                    "side": side,
                    "type": "market",
                    "quantity": str(quantity),
                },
            )
            for symbol, side, quantity in plan
        )
    )
    for answer in answers:
        assert answer.status_code == 201, answer.text
    return {int(answer.json()["id"]) for answer in answers}


async def _check(
    leader: User, led: int, followers: list[tuple[User, int, Decimal]], burst: int
) -> None:
    for symbol in UNIT:
        lead = await position_qty(leader, led, symbol)
        for user, portfolio, ratio in followers:
            held = await position_qty(user, portfolio, symbol)
            where = f"burst {burst}, {symbol}: leader {lead}, follower ×{ratio} {held}"
            assert abs(held - lead * ratio) <= STEP, where
            if lead == 0:
                assert held == 0, where
            else:
                assert held == 0 or (held > 0) == (lead > 0), where


async def test_random_concurrent_bursts_keep_every_follower_at_the_leader_times_its_ratio(
    app: FastAPI, user_factory: Any
) -> None:
    rng = random.Random(3030)
    leader: User = await user_factory()
    led = await leader.portfolio(name="lead", visibility="public", initial_balance="1000000")
    await set_price(app, "BTCUSDT", "50000")
    await set_price(app, "ETHUSDT", "3000")
    followers: list[tuple[User, int, Decimal]] = []
    relations: list[tuple[User, int]] = []
    for ratio in (Decimal("0.5"), Decimal(2)):
        user: User = await user_factory()
        mine = await user.portfolio(name=f"copies x{ratio}", initial_balance="1000000")
        relation = await follow(
            user,
            led["id"],
            mine["id"],
            mode="multiplier",
            multiplier=str(ratio),
            allocation=100000,
        )
        followers.append((user, mine["id"], ratio))
        relations.append((user, relation["id"]))
    for burst in range(12):
        plan: list[tuple[str, str, Decimal]] = []
        for _ in range(rng.randint(2, 8)):
            symbol = rng.choice(list(UNIT))
            plan.append((symbol, rng.choice(("buy", "sell")), UNIT[symbol] * rng.randint(1, 4)))
        if burst % 3 == 2:  # a full close of what the leader holds, sent with the rest
            for symbol in UNIT:
                held = await position_qty(leader, led["id"], symbol)
                if held != 0:
                    plan.append((symbol, "sell" if held > 0 else "buy", abs(held)))
            rng.shuffle(plan)
        placed = await _burst(leader, led["id"], plan)
        if burst % 4 == 3:  # then flat in every symbol, one order each
            for symbol in UNIT:
                held = await position_qty(leader, led["id"], symbol)
                if held != 0:
                    side = "sell" if held > 0 else "buy"
                    closed = await market(leader, led["id"], symbol, side, str(abs(held)))
                    placed.add(int(closed["id"]))
        for user, relation_id in relations:
            await drained(user, relation_id, placed)
        await _check(leader, led["id"], followers, burst)
