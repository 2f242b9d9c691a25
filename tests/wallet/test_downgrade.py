"""After a downgrade (or when a paid period ends) objects over the tier are kept, read-only: the
oldest stay writable, the newest over the limit refuse writes with `tier_limit` and read as
before, and upgrading again lifts it (docs/tiers.md "After a downgrade"). Also the two limits
B9 names that are checked where their object is made: backtest history and paid subscriptions."""

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from sqlalchemy import update

from papertrade.kit.time import now_ms
from papertrade.models import Membership
from tests.conftest import User, sign_up
from tests.fakes.trongrid import FakeTronGrid
from tests.trading_api.helpers import set_price
from tests.wallet.conftest import balance, fund

DSL = "symbol BTCUSDT\ntimeframe 1h\nwhen close < 0 then buy 0.01 qty\n"
DAY = 86_400_000


async def order(user: User, portfolio_id: int, side: str = "buy", **extra: Any) -> Any:
    body = {"portfolio_id": portfolio_id, "symbol": "BTCUSDT", "side": side, "type": "market"}
    return await user.post("/v1/order", json=body | {"quantity": "0.01"} | extra)


def refused(response: Any, words: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["error"] == "tier_limit" and words in body["msg"], body
    assert "/v1/launch/tiers" in body["msg"]


async def test_over_limit_portfolios_turn_read_only_and_back(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    text = (Path(__file__).parents[2] / "docs" / "tiers.md").read_text()
    for line in (
        "P3, P4   read-only      POST /v1/order → 403 tier_limit",
        "delete P1  →  P2, P3 writable, P4 read-only",
        "buy pro again  →  all four writable",
    ):
        assert line in text  # the worked example this test walks through
    await set_price(wapp, "BTCUSDT", "60000")
    await fund(wapp, fake, member, "100")
    assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
    ids = [(await member.portfolio(name=f"p{n}"))["id"] for n in range(4)]
    opened = await order(member, ids[3])
    assert opened.status_code == 201, opened.text

    back = await member.post("/v1/launch/tiers/me", json={"tier": "free"})
    assert back.status_code == 200, back.text
    # The two oldest keep working.
    for pid in ids[:2]:
        assert (await order(member, pid)).status_code == 201
        patched = await member.patch(f"/v1/portfolios/{pid}", json={"description": "ok"})
        assert patched.status_code == 200
    # The two newest are read-only, not deleted.
    listed = {p["id"] for p in (await member.get("/v1/portfolios/my")).json()}
    assert set(ids) <= listed
    for pid in ids[2:]:
        refused(await order(member, pid), "read-only")
        refused(await order(member, pid), "free tier's 2 portfolios")
        refused(await member.patch(f"/v1/portfolios/{pid}", json={"name": "x"}), "read-only")
        refused(
            await member.post(f"/v1/portfolios/{pid}/top-up", json={"amount": "10"}), "read-only"
        )
        transfer = {"direction": "to_portfolio", "portfolio_id": pid, "amount": "1"}
        refused(await member.post("/v1/user/wallet/transfers", json=transfer), "read-only")
        assert (await member.get(f"/v1/portfolios/{pid}")).status_code == 200
        assert (await member.get(f"/v1/portfolios/{pid}/positions")).status_code == 200
    before = await balance(member)
    out = {"direction": "from_portfolio", "portfolio_id": ids[3], "amount": "1"}
    refused_out = await member.post("/v1/user/wallet/transfers", json=out)
    assert refused_out.json()["error"] == "portfolio_money_is_paper"  # paper, read-only or not
    assert await balance(member) == before
    closed = await order(member, ids[3], side="sell", action="close")
    assert closed.status_code == 201, closed.text  # nothing is trapped: closing still works

    # Deleting an older one brings the next into the limit.
    assert (await member.delete(f"/v1/portfolios/{ids[0]}")).status_code == 200
    assert (await order(member, ids[2])).status_code == 201
    refused(await order(member, ids[3]), "read-only")

    again = await member.post("/v1/launch/tiers/me", json={"tier": "pro"})
    assert again.status_code == 200, again.text
    assert (await order(member, ids[3])).status_code == 201


async def test_over_limit_strategies_turn_read_only_when_the_period_ends(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    await fund(wapp, fake, member, "15")
    assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
    made = []
    for n in range(4):
        created = await member.post(
            "/v1/strategies", json={"kind": "dsl", "name": f"s{n}", "source": DSL}
        )
        assert created.status_code == 201, created.text
        made.append(created.json()["id"])
    # The paid period ends unrenewed (no job: the tier in force is read from paid_until).
    async with wapp.state.ctx.db.unit_of_work() as session:
        await session.execute(
            update(Membership)
            .where(Membership.user_id == member.id)
            .values(paid_until=now_ms() - 1)
        )
    newest = made[3]
    refused(
        await member.post(f"/v1/strategies/{newest}/versions", json={"source": DSL}),
        "free tier's 3 strategies",
    )
    refused(await member.patch(f"/v1/strategies/{newest}", json={"name": "n"}), "read-only")
    assert (await member.get(f"/v1/strategies/{newest}")).status_code == 200
    ok = await member.post(f"/v1/strategies/{made[2]}/versions", json={"source": DSL})
    assert ok.status_code == 201, ok.text

    assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 409
    await fund(wapp, fake, member, "15")
    assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
    lifted = await member.post(f"/v1/strategies/{newest}/versions", json={"source": DSL})
    assert lifted.status_code == 201, lifted.text


async def test_backtest_history_reaches_back_the_tiers_days(member: User) -> None:
    created = await member.post("/v1/strategies", json={"kind": "dsl", "name": "bt", "source": DSL})
    sid = created.json()["id"]
    now = now_ms()
    too_old = {"start": now - 100 * DAY, "end": now - 99 * DAY}
    refused(
        await member.post(f"/v1/strategies/{sid}/backtests", json=too_old),
        "free tier allows 90 days of backtest history",
    )
    recent = await member.post(
        f"/v1/strategies/{sid}/backtests", json={"start": now - 3 * DAY, "end": now - 2 * DAY}
    )
    assert recent.status_code == 202, recent.text


async def test_paid_signal_subscriptions_need_pro(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    owner = await sign_up(wapp)
    portfolio = await owner.portfolio(visibility="public")
    priced = await owner.client.put(
        f"/v1/portfolios/{portfolio['id']}/subscription-price",
        json={"price": "5"},
        headers=owner.write_headers(),
    )
    assert priced.status_code in (200, 201), priced.text
    body = {"portfolio_id": portfolio["id"], "tier": "paid"}
    refused(await member.post("/v1/subscribe", json=body), "no paid signal subscriptions")
    free = await member.post("/v1/subscribe", json={"portfolio_id": portfolio["id"]})
    assert free.status_code == 201, free.text
    await member.post(f"/v1/subscriptions/{free.json()['id']}/cancel")
    await fund(wapp, fake, member, "20")
    assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
    paid = await member.post("/v1/subscribe", json=body)
    assert paid.status_code == 201, paid.text
    assert paid.json()["tier"] == "paid"
    await owner.client.aclose()
