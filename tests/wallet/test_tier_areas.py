"""The tier limits of the areas built after the wallet: saved strategies and Python strategies,
leaders a user copies, followers a leader takes (domain rules B9)."""

import asyncio

import pytest
from fastapi import FastAPI
from sqlalchemy import text

from tests.conftest import PG_URL, User, sign_up
from tests.fakes.trongrid import FakeTronGrid
from tests.wallet.conftest import fund

DSL = "symbol BTCUSDT\ntimeframe 1h\nwhen close < 0 then buy 0.01 qty\n"
PYTHON = """class Strategy:
    def init(self, ctx):
        pass

    def next(self, ctx):
        pass
"""


async def strategy(user: User, kind: str, source: str, name: str) -> tuple[int, dict[str, str]]:
    made = await user.post("/v1/strategies", json={"kind": kind, "name": name, "source": source})
    return made.status_code, made.json()


async def test_free_strategies_are_three_and_dsl_only_until_an_upgrade(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    for n in range(3):
        assert (await strategy(member, "dsl", DSL, f"s{n}"))[0] == 201
    status, refused = await strategy(member, "dsl", DSL, "s3")
    assert (status, refused["error"]) == (403, "tier_limit")
    assert "free tier allows 3 strategies" in refused["msg"]
    assert "Upgrade to pro (25 strategies)" in refused["msg"]
    status, python = await strategy(member, "python", PYTHON, "py")
    assert (status, python["error"]) == (403, "tier_limit")
    assert "no Python strategies" in python["msg"]

    await fund(wapp, fake, member, "15")
    assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
    assert (await strategy(member, "dsl", DSL, "s3"))[0] == 201
    assert (await strategy(member, "python", PYTHON, "py"))[0] == 201


async def test_a_free_follower_copies_one_leader(member: User, wapp: FastAPI) -> None:
    leaders = [await sign_up(wapp) for _ in range(2)]
    led = [(await leader.portfolio(visibility="public"))["id"] for leader in leaders]
    mine = [(await member.portfolio(name=f"copy {n}"))["id"] for n in range(2)]
    body = {"mode": "fixed_ratio", "allocation": 100}
    first = await member.post(
        "/v1/copy/relations", json={**body, "leader_portfolio_id": led[0], "portfolio_id": mine[0]}
    )
    assert first.status_code == 201, first.text
    second = await member.post(
        "/v1/copy/relations", json={**body, "leader_portfolio_id": led[1], "portfolio_id": mine[1]}
    )
    assert second.status_code == 403 and second.json()["error"] == "tier_limit"
    assert "free tier allows 1 leaders followed" in second.json()["msg"]
    for leader in leaders:
        await leader.client.aclose()


async def test_a_free_leader_takes_ten_followers(member: User, wapp: FastAPI) -> None:
    led = (await member.portfolio(visibility="public"))["id"]
    body = {"mode": "fixed_ratio", "allocation": 100, "leader_portfolio_id": led}
    followers = [await sign_up(wapp) for _ in range(11)]
    answers = []
    for follower in followers:
        pid = (await follower.portfolio())["id"]
        made = await follower.post("/v1/copy/relations", json={**body, "portfolio_id": pid})
        answers.append((made.status_code, made.json().get("error")))
        await follower.client.aclose()
    assert answers[:10] == [(201, None)] * 10
    assert answers[10] == (403, "tier_limit")


@pytest.mark.skipif(PG_URL is None, reason="SQLite's writes take one lock: no row locks to share")
async def test_a_tier_count_lets_rows_pointing_at_the_user_go_in_meanwhile(
    member: User, wapp: FastAPI
) -> None:
    """A tier check locks the user's row to count one creation after another, but not against
    rows that point at the user (a notification the outbox writes, with FOR KEY SHARE on the
    user): a plain FOR UPDATE waited for them, and closed a cycle with the outbox's round."""
    async with wapp.state.ctx.db.sessions() as pointing:
        await pointing.begin()
        await pointing.execute(
            text("SELECT id FROM users WHERE id = :id FOR KEY SHARE"), {"id": member.id}
        )
        made = await asyncio.wait_for(member.post("/v1/portfolios", json={"name": "now"}), 10)
        assert made.status_code == 201, made.text
        await pointing.rollback()
