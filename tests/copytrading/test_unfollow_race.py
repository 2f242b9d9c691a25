"""Unfollowing while the mirror copies a leader's fill: the copy of a fill made before the unfollow
is made, and the unfollow settles after it.

The mirror takes the follower's portfolio and then writes its copy rows, which point at the
relation and update it; an unfollow takes the relation and then the follower's portfolio to
settle. Taken in these opposite orders the two deadlocked on PostgreSQL, and PostgreSQL stopped
the mirror's round: the relation had ended by its retry, so the fill was never copied. The
mirror now takes the relations first, in the unfollow's order."""

import asyncio
from decimal import Decimal
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import select, text

from papertrade.copytrading import service as copies
from papertrade.db import Database
from papertrade.engine import risk
from papertrade.kit.time import now_ms
from papertrade.models import CopyRelation, Portfolio
from tests.conftest import PG_URL, User
from tests.copytrading.helpers import (
    follow,
    leader_and_follower,
    portfolio_balance,
    position_qty,
    trades,
)
from tests.pglocks import until_waiting
from tests.trading_api.helpers import market, set_price


@pytest.mark.skipif(PG_URL is None, reason="SQLite's writes take one lock: they cannot race")
async def test_an_unfollow_while_the_mirror_copies_a_fill_waits_for_the_copy(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "BTCUSDT", "50000")
    relation = await follow(
        follower, led["id"], mine["id"], mode="multiplier", multiplier=1, allocation=1000
    )
    db: Database = app.state.ctx.db
    async with db.sessions() as trading:  # the follower's own order, say, holds the portfolio
        await trading.begin()
        await trading.execute(
            select(Portfolio.id).where(Portfolio.id == mine["id"]).with_for_update()
        )
        opened = await market(leader, led["id"], "BTCUSDT", "buy", "0.01")
        # the mirror, at the follower's portfolio (only the racers have used the relations)
        await until_waiting(db, 1, touching="copy_relations")
        unfollowing = asyncio.create_task(
            follower.post(
                f"/v1/copy/relations/{relation['id']}/unfollow", json={"close_positions": False}
            )
        )
        await until_waiting(db, 2, touching="copy_relations")  # and the unfollow, at the relation
        await trading.commit()
    ended = await asyncio.wait_for(unfollowing, 30)
    assert ended.status_code == 200, ended.text
    assert (ended.json()["status"], ended.json()["end_reason"]) == ("ended", "unfollow")
    (copy,) = await trades(follower, relation["id"], 1)  # made while the copy was running
    assert (copy["leader_order_id"], copy["status"]) == (opened["id"], "copied")
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal("0.01")


@pytest.mark.skipif(PG_URL is None, reason="SQLite's writes take one lock: they cannot race")
async def test_deleting_a_following_portfolio_while_the_mirror_copies_into_it(
    app: FastAPI, user_factory: Any
) -> None:
    """The deletion takes the portfolio's copy relations before the portfolio, as the mirror
    does: before, it held the portfolio and waited for the relation, which the mirror held
    while it waited for the portfolio."""
    leader: User = await user_factory()
    first: User = await user_factory()
    leaving: User = await user_factory()
    led = await leader.portfolio(name="lead", visibility="public", initial_balance="10000")
    held = await first.portfolio(name="copies", initial_balance="10000")  # locked first: lower id
    mine = await leaving.portfolio(name="copies", initial_balance="10000")
    await set_price(app, "BTCUSDT", "50000")
    for user, portfolio in ((first, held), (leaving, mine)):
        await follow(
            user, led["id"], portfolio["id"], mode="multiplier", multiplier=1, allocation=1000
        )
    db: Database = app.state.ctx.db
    async with db.sessions() as trading:
        await trading.begin()
        await trading.execute(
            select(Portfolio.id).where(Portfolio.id == held["id"]).with_for_update()
        )
        await market(leader, led["id"], "BTCUSDT", "buy", "0.01")
        # the mirror: both relations taken, at the first portfolio
        await until_waiting(db, 1, touching="copy_relations")
        deleting = asyncio.create_task(
            leaving.client.delete(f"/v1/portfolios/{mine['id']}", headers=leaving.write_headers())
        )
        # the deletion, at the relation the mirror holds
        await until_waiting(db, 2, touching="copy_relations")
        await trading.commit()
    deleted = await asyncio.wait_for(deleting, 30)
    assert deleted.status_code == 200, deleted.text
    assert await position_qty(first, held["id"], "BTCUSDT") == Decimal("0.01")  # copied
    (ended,) = (await leaving.get("/v1/copy/relations")).json()
    assert (ended["status"], ended["end_reason"]) == ("ended", "unfollow")
    (copy,) = await trades(leaving, ended["id"], 1)  # the fill came before the deletion
    assert copy["status"] == "copied"


@pytest.mark.skipif(PG_URL is None, reason="SQLite's writes take one lock: they cannot race")
async def test_funding_while_another_transaction_adds_to_the_net_pnl_keeps_both(
    app: FastAPI, user_factory: Any
) -> None:
    """The funding consumer adds a charge to the copy's net PnL while an unfollow that closes the
    copied positions adds their PnL to it in its own transaction: neither change is lost. It
    read the relation without a lock and wrote its stale sum back over the other's."""
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "SOLUSDT", "100")
    relation = await follow(
        follower, led["id"], mine["id"], mode="multiplier", multiplier=1, allocation=1000
    )
    await market(leader, led["id"], "SOLUSDT", "buy", "2")
    (copy,) = await trades(follower, relation["id"], 1)
    db: Database = app.state.ctx.db
    async with db.sessions() as closing:  # the unfollow's close, say: −7 of PnL and fees
        await closing.begin()
        row = await closing.get(CopyRelation, relation["id"], with_for_update={"key_share": True})
        assert row is not None
        row.cum_net_pnl -= Decimal(7)
        await closing.flush()
        # A long pays a positive rate: 2 SOL × 100 × 0.01 % = 0.02 USDT.
        await risk.settle_funding(
            app.state.ctx, "SOLUSDT", now_ms(), Decimal("0.0001"), Decimal(100)
        )
        await until_waiting(db, 1, query_like="%copy_relations%", touching="copy_relations")
        await closing.commit()
    expected = -copy["commission"] - 7 - 0.02  # the copy's fee (0.1), the close, the funding
    for _ in range(600):
        seen = (await follower.get(f"/v1/copy/relations/{relation['id']}")).json()["cum_net_pnl"]
        if seen != -copy["commission"] - 7:
            break
        await asyncio.sleep(0.05)
    assert seen == pytest.approx(expected)  # −7.12: the close kept, the funding counted


@pytest.mark.skipif(PG_URL is None, reason="SQLite's writes take one lock: they cannot race")
async def test_a_settlement_takes_both_portfolios_in_the_order_other_writers_do(
    app: FastAPI, user_factory: Any
) -> None:
    """A revenue share leaves the follower's portfolio for the leader's. The settlement took the
    follower's and then the leader's; the funding job (like every path that takes several) takes
    them in id order, the leader's (older) first: the two deadlocked and the settlement failed."""
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    assert led["id"] < mine["id"]
    terms = await leader.client.put(
        f"/v1/copy/leaders/{led['id']}",
        json={"profit_share_pct": 20},
        headers=leader.write_headers(),
    )
    assert terms.status_code == 200, terms.text
    relation = await follow(follower, led["id"], mine["id"], mode="fixed_ratio", allocation=50)
    db: Database = app.state.ctx.db

    async def settle() -> Decimal:
        async with app.state.ctx.transaction() as uow:
            row = await uow.session.get(CopyRelation, relation["id"], with_for_update=True)
            assert row is not None
            row.cum_net_pnl = Decimal("12.5")
            return (await copies.settle(uow, row, "weekly")).fee

    async with db.sessions() as funding:  # the funding job, in id order: the leader's first
        await funding.begin()
        await funding.execute(text("SET LOCAL deadlock_timeout = '20s'"))  # the other: victim
        take = select(Portfolio.id).with_for_update()
        await funding.execute(take.where(Portfolio.id == led["id"]))
        settling = asyncio.create_task(settle())
        # the settlement, holding its relation (the app's own work may wait for the leader's too)
        blocker = await funding.scalar(text("SELECT pg_backend_pid()"))
        await until_waiting(db, touching="copy_relations", blocked_by=blocker, running=settling)
        await asyncio.wait_for(funding.execute(take.where(Portfolio.id == mine["id"])), 30)
        await funding.commit()
    assert await asyncio.wait_for(settling, 30) == Decimal("2.5")  # 20 % of 12.5
    assert await portfolio_balance(leader, led["id"]) == Decimal("10002.5")
    assert await portfolio_balance(follower, mine["id"]) == Decimal("9997.5")
