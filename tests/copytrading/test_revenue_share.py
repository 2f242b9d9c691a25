"""Revenue share: the high-water mark, the fee from the follower's portfolio to a portfolio of the
leader's choosing through both ledgers (paper: never a wallet), the settlement readable by both
sides, and money that moves but is never made."""

import asyncio
from decimal import Decimal
from typing import Any

import httpx
from fastapi import FastAPI
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from papertrade.copytrading import rules
from papertrade.copytrading import service as copies
from papertrade.copytrading.settlement import run_due, week_start
from papertrade.engine import risk
from papertrade.kit.time import now_ms
from papertrade.models import CopyRelation, Portfolio, Wallet
from papertrade.orders.pricing import Venue
from tests.conftest import User
from tests.copytrading.helpers import (
    follow,
    leader_and_follower,
    portfolio_balance,
    position_qty,
    trades,
)
from tests.trading_api.helpers import market, set_price


async def wallet_balance(user: User) -> Decimal:
    body = (await user.get("/v1/user/wallet")).json()
    assert body["balance"] == body["ledger_balance"]  # the wallet's ledger adds up
    return Decimal(str(body["balance"]))


async def copied_round_trip(
    app: FastAPI, leader: User, follower: User
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """docs/social.md's worked example: 100 USDT at 10x at 50,000, closed at 51,000."""
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "BTCUSDT", "50000")
    relation = await follow(
        follower,
        led["id"],
        mine["id"],
        mode="fixed_amount",
        amount=100,
        allocation=1000,
        leverage=10,
    )
    await market(leader, led["id"], "BTCUSDT", "buy", "0.01")
    await trades(follower, relation["id"], 1)
    await set_price(app, "BTCUSDT", "51000")
    await market(leader, led["id"], "BTCUSDT", "sell", "0.01")
    await trades(follower, relation["id"], 2)
    assert await position_qty(follower, mine["id"], "BTCUSDT") == 0
    return led, mine, relation


async def test_unfollow_settles_the_worked_example(app: FastAPI, user_factory: Any) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine, relation = await copied_round_trip(app, leader, follower)
    # 0.02 BTC × (51,000 − 50,000) = 20 USDT, less 0.5 + 0.51 taker fees: 18.99 net.
    seen = (await follower.get(f"/v1/copy/relations/{relation['id']}")).json()
    assert seen["cum_net_pnl"] == 18.99
    before = await portfolio_balance(follower, mine["id"])
    leader_before = await portfolio_balance(leader, led["id"])

    ended = await follower.post(
        f"/v1/copy/relations/{relation['id']}/unfollow", json={"close_positions": True}
    )
    assert ended.status_code == 200, ended.text
    assert ended.json()["status"] == "ended" and ended.json()["end_reason"] == "unfollow"
    assert ended.json()["hwm"] == 18.99 and ended.json()["fees_paid"] == 1.899

    # 10 % of 18.99 above a mark of 0: 1.899 from the follower's portfolio to the leader's
    # portfolio (paper money; the leader's wallet is untouched).
    assert await portfolio_balance(follower, mine["id"]) == before - Decimal("1.899")
    assert await portfolio_balance(leader, led["id"]) == leader_before + Decimal("1.899")
    assert await wallet_balance(leader) == 0
    assert (await leader.get("/v1/user/wallet/ledger")).json() == []
    for side, portfolio in ((leader, led), (follower, mine)):
        (row,) = (await side.get(f"/v1/portfolios/{portfolio['id']}/ledger")).json()[:1]
        assert row["kind"] == "profit_share"
        assert row["amount"] == (1.899 if side is leader else -1.899)
    for side in (leader, follower):
        (event,) = (await side.get("/v1/copy/settlements")).json()[:1]
        assert event["relation_id"] == relation["id"]
        assert (event["reason"], event["net_pnl"], event["hwm_before"]) == ("unfollow", 18.99, 0)
        assert (event["hwm_after"], event["pct"], event["fee"]) == (18.99, 10, 1.899)
        assert event["payout_portfolio_id"] == (led["id"] if side is leader else None)
    again = await follower.post(f"/v1/copy/relations/{relation['id']}/unfollow", json={})
    assert again.status_code == 409 and again.json()["error"] == "copy_ended"


async def test_unfollow_keeping_positions_settles_only_what_was_realised(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "BTCUSDT", "50000")
    relation = await follow(
        follower,
        led["id"],
        mine["id"],
        mode="fixed_amount",
        amount=100,
        allocation=1000,
        leverage=10,
    )
    await market(leader, led["id"], "BTCUSDT", "buy", "0.01")  # copied: 0.02 BTC, fee 0.5
    await trades(follower, relation["id"], 1)
    await set_price(app, "BTCUSDT", "51000")
    await market(leader, led["id"], "BTCUSDT", "sell", "0.005")  # a half: 0.01 of 0.02
    await trades(follower, relation["id"], 2)
    # Realised 0.01 × 1,000 = 10, less fees of 0.5 and 0.01 × 51,000 × 0.05 % = 0.255: 9.245.
    leader_before = await portfolio_balance(leader, led["id"])

    ended = await follower.post(
        f"/v1/copy/relations/{relation['id']}/unfollow", json={"close_positions": False}
    )
    assert ended.status_code == 200, ended.text
    assert (ended.json()["status"], ended.json()["end_reason"]) == ("ended", "unfollow")
    # The 0.01 BTC left stays open as the follower's own; its unrealised 10 is not shared.
    assert await position_qty(follower, mine["id"], "BTCUSDT") == Decimal("0.01")
    (event,) = (await follower.get("/v1/copy/settlements")).json()
    assert (event["reason"], event["net_pnl"], event["hwm_before"]) == ("unfollow", 9.245, 0)
    assert (event["hwm_after"], event["fee"]) == (9.245, 0.9245)
    assert await portfolio_balance(leader, led["id"]) == leader_before + Decimal("0.9245")
    assert await wallet_balance(leader) == 0

    # Closing them later is the follower's own trade: the ended relation does not count it.
    await market(follower, mine["id"], "BTCUSDT", "sell", "0.01")
    assert await position_qty(follower, mine["id"], "BTCUSDT") == 0
    seen = (await follower.get(f"/v1/copy/relations/{relation['id']}")).json()
    assert (seen["cum_net_pnl"], seen["fees_paid"]) == (9.245, 0.9245)
    assert len((await follower.get("/v1/copy/settlements")).json()) == 1


async def test_a_profit_share_above_30_pct_is_refused(user_factory: Any) -> None:
    leader: User = await user_factory()
    led = await leader.portfolio(name="lead", visibility="public")
    path = f"/v1/copy/leaders/{led['id']}"

    async def put(pct: Any) -> Any:
        body = {"profit_share_pct": pct}
        return await leader.client.put(path, json=body, headers=leader.write_headers())

    refused = await put("30.01")
    assert refused.status_code == 422 and set(refused.json()) == {"error", "msg"}
    assert refused.json()["error"] == "validation_error"
    assert "profit_share_pct" in refused.json()["msg"]
    assert (await leader.get(path)).json()["profit_share_pct"] == 10  # unchanged
    top = await put(30)
    assert top.status_code == 200 and top.json()["profit_share_pct"] == 30


async def test_weekly_job_settles_only_without_open_positions(
    app: FastAPI, user_factory: Any
) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine, relation = await copied_round_trip(app, leader, follower)
    ctx = app.state.ctx
    venue = Venue.of(ctx)
    # A copied position is open again: the week rolls on.
    await market(leader, led["id"], "BTCUSDT", "buy", "0.01")
    await trades(follower, relation["id"], 3)
    await run_due(ctx, venue)
    assert (await follower.get("/v1/copy/settlements")).json() == []
    await market(leader, led["id"], "BTCUSDT", "sell", "0.01")  # flat again (no PnL: same mark)
    await trades(follower, relation["id"], 4)
    await run_due(ctx, venue)
    (event,) = (await follower.get("/v1/copy/settlements")).json()
    assert event["reason"] == "weekly" and event["hwm_before"] == 0
    # At 51,000 the 100 USDT at 10x buy 0.019 BTC (floored to the step): two taker fees of
    # 0.4845 on 969 USDT. Net PnL 18.99 − 0.969 = 18.021; 10 % is 1.8021.
    assert (event["net_pnl"], event["fee"]) == (18.021, 1.8021)
    async with ctx.db.reader() as session:
        row = await session.get(CopyRelation, relation["id"])
        assert row is not None and row.settled_week == week_start(row.settled_week + 1)
    await run_due(ctx, venue)  # the same week: nothing more
    assert len((await follower.get("/v1/copy/settlements")).json()) == 1
    assert mine["id"] != led["id"]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.decimals(min_value=-1000, max_value=1000, places=2), min_size=1, max_size=12),
    st.decimals(min_value=0, max_value=30, places=1),
)
def test_fees_follow_the_high_water_mark(pnls: list[Decimal], pct: Decimal) -> None:
    """Whatever the path of net PnL, the fees add up to pct of its highest point above 0 (to
    the micro-USDT rounding of each settlement), and losses never refund a fee."""
    hwm, paid = Decimal(0), Decimal(0)
    for pnl in pnls:
        share = rules.revenue_share(pnl, hwm, pct, Decimal(10**9))
        assert share.fee >= 0 and share.hwm_after >= hwm
        hwm, paid = share.hwm_after, paid + share.fee
    peak = max([Decimal(0), *pnls])
    assert hwm == peak
    assert peak * pct / 100 - Decimal("0.000001") * len(pnls) <= paid <= peak * pct / 100


async def test_settlements_move_money_never_create_it(app: FastAPI, user_factory: Any) -> None:
    """Many settlements along a path of gains and losses: the follower's portfolio plus the
    leader's never changes, the leader's wallet stays empty, and each fee is what the rule
    says."""
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower, balance="50")
    relation = await follow(follower, led["id"], mine["id"], mode="fixed_ratio", allocation=50)
    ctx = app.state.ctx
    path = ["10", "-5", "25.5", "25.5", "12", "80", "400", "1000"]  # the last ones outgrow 50 USDT
    for pnl in path:
        async with ctx.transaction() as uow:
            row = await uow.session.get(CopyRelation, relation["id"], with_for_update=True)
            assert row is not None
            row.cum_net_pnl = Decimal(pnl)
            hwm_before = row.hwm
            balance = await portfolio_total(uow.session, mine["id"], led["id"], leader.id)
            settled = await copies.settle(uow, row, "weekly")
        async with ctx.db.reader() as session:
            assert await portfolio_total(session, mine["id"], led["id"], leader.id) == balance
            portfolio = await session.get(Portfolio, mine["id"])
            assert portfolio is not None and portfolio.balance >= 0  # never past what it holds
        expected = rules.revenue_share(Decimal(pnl), hwm_before, Decimal(10), Decimal(10**9))
        assert settled.fee <= expected.fee and settled.hwm_after == expected.hwm_after
    assert await wallet_balance(leader) == 0
    leads = await portfolio_balance(leader, led["id"])
    assert leads + await portfolio_balance(follower, mine["id"]) == 100


async def portfolio_total(
    session: Any, portfolio_id: int, leader_portfolio_id: int, leader_user_id: int
) -> Decimal:
    """The follower's portfolio, the leader's and the leader's wallet together."""
    portfolio = await session.get(Portfolio, portfolio_id, populate_existing=True)
    leads = await session.get(Portfolio, leader_portfolio_id, populate_existing=True)
    wallet = await session.scalar(
        select(Wallet)
        .where(Wallet.user_id == leader_user_id)
        .execution_options(populate_existing=True)
    )
    held = wallet.balance if wallet is not None else Decimal(0)
    return Decimal(portfolio.balance) + Decimal(leads.balance) + held


async def test_leader_stats_show_the_copies(app: FastAPI, user_factory: Any, anon: Any) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, _, relation = await copied_round_trip(app, leader, follower)
    terms = await leader.client.put(
        f"/v1/copy/leaders/{led['id']}",
        json={"profit_share_pct": 20},
        headers=leader.write_headers(),
    )
    assert terms.status_code == 200 and terms.json()["profit_share_pct"] == 20
    shown = await anon.get(f"/v1/copy/leaders/{led['id']}")  # no sign-in needed
    assert shown.status_code == 200, shown.text
    body = shown.json()
    assert (body["followers"], body["followers_pnl"], body["aum"]) == (1, 18.99, 1000)
    assert body["win_rate"] == 1  # the leader's one close made money
    assert body["roi_7d_pct"] is None  # not a week old yet
    # The relation keeps the 10 % it was made with; new followers get 20 %.
    seen = (await follower.get(f"/v1/copy/relations/{relation['id']}")).json()
    assert seen["profit_share_pct"] == 10
    await follower.post(f"/v1/copy/relations/{relation['id']}/unfollow", json={})
    assert (await anon.get(f"/v1/copy/leaders/{led['id']}")).json()["followers"] == 0


async def test_portfolio_stop_closes_ends_and_settles(app: FastAPI, user_factory: Any) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "BTCUSDT", "50000")
    relation = await follow(
        follower,
        led["id"],
        mine["id"],
        mode="fixed_amount",
        amount=100,
        allocation=1000,
        leverage=10,
        stop_pct=1,
    )
    await market(leader, led["id"], "BTCUSDT", "buy", "0.01")
    await trades(follower, relation["id"], 1)
    ctx = app.state.ctx
    assert (await run_due(ctx, Venue.of(ctx)))["stopped"] == 0  # −0.5 of fees: above 990
    # 0.02 BTC × −1,000 = −20 unrealised: 1000 − 0.5 − 20 < 1000 × (1 − 1 %) = 990.
    await set_price(app, "BTCUSDT", "49000")
    await run_due(ctx, Venue.of(ctx))
    ended = (await follower.get(f"/v1/copy/relations/{relation['id']}")).json()
    assert (ended["status"], ended["end_reason"]) == ("ended", "stop")
    assert await position_qty(follower, mine["id"], "BTCUSDT") == 0
    # The close realised −20 and paid 0.49 of fees: net −20.99; nothing to share.
    (event,) = (await follower.get("/v1/copy/settlements")).json()
    assert (event["reason"], event["net_pnl"], event["fee"]) == ("stop", -20.99, 0)


async def test_funding_counts_in_the_copy_net_pnl(app: FastAPI, user_factory: Any) -> None:
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower)
    await set_price(app, "SOLUSDT", "100")
    relation = await follow(
        follower, led["id"], mine["id"], mode="multiplier", multiplier=1, allocation=1000
    )
    await market(leader, led["id"], "SOLUSDT", "buy", "2")
    (copy,) = await trades(follower, relation["id"], 1)
    after_fees = -copy["commission"]  # 2 × 100 × 0.05 % = 0.1
    # A long pays a positive rate: 2 SOL × 100 × 0.01 % = 0.02 USDT.
    await risk.settle_funding(app.state.ctx, "SOLUSDT", now_ms(), Decimal("0.0001"), Decimal(100))
    for _ in range(600):
        seen = (await follower.get(f"/v1/copy/relations/{relation['id']}")).json()
        if seen["cum_net_pnl"] != after_fees:
            break
        await asyncio.sleep(0.05)
    assert after_fees == -0.1 and seen["cum_net_pnl"] == -0.12


async def test_the_leader_chooses_the_portfolio_that_receives_the_shares(
    app: FastAPI, user_factory: Any
) -> None:
    """Issue 30: a profit share is paper. It goes to the portfolio the leader chose (the copied
    one until they choose), never to a wallet; the settlement says where it went."""
    leader: User = await user_factory()
    follower: User = await user_factory()
    led, mine = await leader_and_follower(leader, follower, balance="500")
    purse = await leader.portfolio(name="purse", initial_balance="100")
    theirs = await follower.portfolio(name="not the leader's")
    path = f"/v1/copy/leaders/{led['id']}"
    refused = await leader.client.put(
        path, json={"payout_portfolio_id": theirs["id"]}, headers=leader.write_headers()
    )
    assert refused.status_code == 404 and refused.json()["error"] == "portfolio_not_found"
    shown = await leader.client.put(
        path, json={"profit_share_pct": 20}, headers=leader.write_headers()
    )
    assert shown.status_code == 200, shown.text
    assert shown.json()["payout_portfolio_id"] == led["id"]  # until chosen: the copied one
    chosen = await leader.client.put(
        path, json={"payout_portfolio_id": purse["id"]}, headers=leader.write_headers()
    )
    assert chosen.status_code == 200, chosen.text
    assert (chosen.json()["payout_portfolio_id"], chosen.json()["profit_share_pct"]) == (
        purse["id"],
        20,
    )
    relation = await follow(follower, led["id"], mine["id"], mode="fixed_ratio", allocation=50)
    async with app.state.ctx.transaction() as uow:
        row = await uow.session.get(CopyRelation, relation["id"], with_for_update=True)
        assert row is not None
        row.cum_net_pnl = Decimal("12.5")
        settled = await copies.settle(uow, row, "weekly")
    assert settled.fee == Decimal("2.5") and settled.payout_portfolio_id == purse["id"]
    assert await portfolio_balance(leader, purse["id"]) == Decimal("102.5")
    assert await portfolio_balance(leader, led["id"]) == 500
    assert await portfolio_balance(follower, mine["id"]) == Decimal("497.5")
    assert await wallet_balance(leader) == 0 and await wallet_balance(follower) == 0
    (event,) = (await leader.get("/v1/copy/settlements")).json()
    assert (event["fee"], event["payout_portfolio_id"]) == (2.5, purse["id"])

    # The chosen portfolio deleted: the shares go back to the copied portfolio.
    assert (await leader.delete(f"/v1/portfolios/{purse['id']}")).status_code == 200
    async with app.state.ctx.transaction() as uow:
        row = await uow.session.get(CopyRelation, relation["id"], with_for_update=True)
        assert row is not None
        row.cum_net_pnl = Decimal("17.5")
        settled = await copies.settle(uow, row, "weekly")
    assert (settled.fee, settled.payout_portfolio_id) == (Decimal(1), led["id"])
    assert await portfolio_balance(leader, led["id"]) == 501


async def test_the_leader_reads_back_the_portfolio_that_receives_the_shares(
    anon: httpx.AsyncClient, user_factory: Any
) -> None:
    """Issue 30: the leader could set where the shares go but not read it. GET …/terms answers
    what the PUT answers, to the owner only, and says where the next settlement pays."""
    leader: User = await user_factory()
    other: User = await user_factory()
    led = await leader.portfolio(name="lead", visibility="public")
    purse = await leader.portfolio(name="purse")  # private: it may still receive shares
    path = f"/v1/copy/leaders/{led['id']}"
    first = await leader.get(f"{path}/terms")
    assert first.status_code == 200, first.text
    assert first.json() == {
        "portfolio_id": led["id"],
        "profit_share_pct": 10,
        "followers": 0,
        "payout_portfolio_id": led["id"],  # until chosen: the copied portfolio itself
    }
    chosen = await leader.client.put(
        path,
        json={"profit_share_pct": 12.5, "payout_portfolio_id": purse["id"]},
        headers=leader.write_headers(),
    )
    assert chosen.status_code == 200, chosen.text
    read = (await leader.get(f"{path}/terms")).json()
    assert read == chosen.json()
    assert (read["payout_portfolio_id"], read["profit_share_pct"]) == (purse["id"], 12.5)
    # A private portfolio's terms are its owner's to read too (the public read refuses it).
    assert (await leader.get(f"/v1/copy/leaders/{purse['id']}/terms")).status_code == 200
    assert (await leader.get(f"/v1/copy/leaders/{purse['id']}")).status_code == 404

    # Nobody else reads them, in the documented shape (docs/errors.md).
    for response, status, error in (
        (await other.get(f"{path}/terms"), 404, "portfolio_not_found"),
        (await anon.get(f"{path}/terms"), 401, "unauthenticated"),
    ):
        assert response.status_code == status and set(response.json()) == {"error", "msg"}
        assert response.json()["error"] == error

    # The chosen portfolio deleted: the read (and the PUT's answer) name the copied one again.
    assert (await leader.delete(f"/v1/portfolios/{purse['id']}")).status_code == 200
    assert (await leader.get(f"{path}/terms")).json()["payout_portfolio_id"] == led["id"]
    kept = await leader.client.put(
        path, json={"profit_share_pct": 12}, headers=leader.write_headers()
    )
    assert kept.status_code == 200 and kept.json()["payout_portfolio_id"] == led["id"]
    gone = await leader.get(f"/v1/copy/leaders/{purse['id']}/terms")
    assert gone.status_code == 404 and gone.json()["error"] == "portfolio_not_found"


async def test_nobody_copies_their_own_portfolio(user_factory: Any) -> None:
    """Issue 30: copying one's own public portfolio from another of one's portfolios paid the
    profit share to oneself. Refused, whatever the portfolio."""
    owner: User = await user_factory()
    led = await owner.portfolio(name="lead", visibility="public")
    other = await owner.portfolio(name="second")
    for mine in (other, led):
        payload = {
            "leader_portfolio_id": led["id"],
            "portfolio_id": mine["id"],
            "mode": "fixed_ratio",
            "allocation": 50,
        }
        refused = await owner.post("/v1/copy/relations", json=payload)
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"] in ("copy_own_portfolio", "copy_invalid")
        assert refused.json()["error"] == ("copy_invalid" if mine is led else "copy_own_portfolio")
    assert (await owner.get("/v1/copy/relations")).json() == []
