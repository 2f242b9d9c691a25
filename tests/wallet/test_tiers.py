"""Membership tiers: the table, paying from the wallet, limits where objects are made, AI quota."""

from decimal import Decimal

from fastapi import FastAPI
from sqlalchemy import update

from papertrade.config import Settings
from papertrade.models import AiUsage
from papertrade.tiers.table import FREE
from tests.conftest import User, bearer, client_for, running_app
from tests.fakes.trongrid import FakeTronGrid
from tests.foundation.helpers import hold_the_window
from tests.wallet.conftest import balance, fund


async def test_the_tier_table_is_public(wapp: FastAPI) -> None:
    async with client_for(wapp) as anon:
        tiers = (await anon.get("/v1/launch/tiers")).json()
    assert [t["name"] for t in tiers] == ["free", "pro", "elite"]
    free, pro, elite = tiers
    assert (free["portfolios"], pro["portfolios"], elite["portfolios"]) == (2, 10, 50)
    assert (free["webhook_tokens"], pro["ai_messages_per_day"], elite["price"]) == (1, 100, 49)
    assert free["price"] == 0 and pro["price"] == 15


async def test_free_limits_name_the_upgrade_and_paying_lifts_them(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    first = await member.portfolio(name="one")
    await member.portfolio(name="two")
    refused = await member.post("/v1/portfolios", json={"name": "three"})
    assert refused.status_code == 403
    assert refused.json()["error"] == "tier_limit"
    assert "free tier allows 2 portfolios" in refused.json()["msg"]
    assert "Upgrade to pro (10 portfolios)" in refused.json()["msg"]
    await member.webhook_token(first["id"])
    token = await member.post(f"/v1/portfolios/{first['id']}/webhook-tokens")
    assert token.status_code == 403 and "1 webhook tokens" in token.json()["msg"]

    broke = await member.post("/v1/launch/tiers/me", json={"tier": "pro"})
    assert broke.status_code == 409 and broke.json()["error"] == "insufficient_funds"
    await fund(wapp, fake, member, "20")
    paid = await member.post("/v1/launch/tiers/me", json={"tier": "pro"})
    assert paid.status_code == 200, paid.text
    assert paid.json()["tier"] == "pro" and paid.json()["wallet_balance"] == 5
    assert (await member.get("/v1/user")).json()["tier"] == "pro"
    assert (await member.post("/v1/portfolios", json={"name": "three"})).status_code == 201
    assert (await member.post(f"/v1/portfolios/{first['id']}/webhook-tokens")).status_code == 201
    entry = (await member.get("/v1/user/wallet/ledger")).json()[0]
    assert (entry["kind"], entry["amount"]) == ("tier_payment", -15)


async def test_going_back_to_free_refunds_the_unused_days_and_deletes_nothing(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    await fund(wapp, fake, member, "15")
    assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
    for name in ("a", "b", "c"):
        await member.portfolio(name=name)
    down = await member.post("/v1/launch/tiers/me", json={"tier": "free"})
    assert down.json()["tier"] == "free" and down.json()["paid_until"] is None
    refund = await balance(member)
    assert Decimal("14.99") < refund <= 15  # all but the seconds used
    assert len((await member.get("/v1/portfolios/my")).json()) == 3  # kept
    again = await member.post("/v1/portfolios", json={"name": "d"})
    assert again.json()["error"] == "tier_limit"
    same = await member.post("/v1/launch/tiers/me", json={"tier": "free"})
    assert same.status_code == 409 and same.json()["error"] == "tier_unchanged"


async def test_renewing_adds_thirty_days(member: User, wapp: FastAPI, fake: FakeTronGrid) -> None:
    await fund(wapp, fake, member, "30")
    first = (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).json()
    second = (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).json()
    assert second["paid_until"] - first["paid_until"] == 30 * 86_400_000
    assert second["wallet_balance"] == 0


async def test_ai_quota_counts_to_the_tier_limit_then_429s(member: User) -> None:
    hold_the_window()  # the burst limit (10 a minute) must not cut in first
    quota = (await member.get("/v1/launch/ai-quota")).json()
    assert quota["limit"] == 10 and quota["remaining"] == 10
    assert quota["resets_at"] % 86_400_000 == 0
    for used in range(1, 11):
        counted = await member.post("/v1/launch/ai-quota/consume")
        assert counted.json()["used"] == used
    refused = await member.post("/v1/launch/ai-quota/consume")
    assert refused.status_code == 429
    body = refused.json()
    assert body["error"] == "ai_quota_exceeded" and body["resets_at"] == quota["resets_at"]
    assert int(refused.headers["Retry-After"]) >= 1
    assert (await member.get("/v1/launch/ai-quota")).json()["remaining"] == 0
    # other features keep working
    assert (await member.get("/v1/user/wallet")).status_code == 200


async def _consume(user: User, times: int) -> list[int]:
    answers = [await user.post("/v1/launch/ai-quota/consume") for _ in range(times)]
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    return [a.json()["used"] for a in answers]


async def test_ai_quota_counts_afresh_after_midnight_utc(member: User, wapp: FastAPI) -> None:
    """Yesterday's prompts do not count today: the day's usage rows are moved a day back, as if
    00:00 UTC had passed."""
    hold_the_window()
    assert await _consume(member, 5) == [1, 2, 3, 4, 5]
    async with wapp.state.ctx.transaction() as uow:
        await uow.session.execute(
            update(AiUsage).where(AiUsage.user_id == member.id).values(day=AiUsage.day - 1)
        )
    quota = (await member.get("/v1/launch/ai-quota")).json()
    assert (quota["used"], quota["remaining"]) == (0, 10)
    assert await _consume(member, 5) == [1, 2, 3, 4, 5]


async def test_two_processes_share_one_ai_count(
    member: User, wapp: FastAPI, wallet_settings: Settings
) -> None:
    """Prompts counted by one app context use up the quota seen by another on the same
    database."""
    key = await member.api_key("write")
    hold_the_window()
    async with (
        running_app(wallet_settings) as other,
        client_for(wapp, headers=bearer(key)) as here,
        client_for(other, headers=bearer(key)) as there,
    ):
        for client, expected in ((here, [1, 2, 3, 4, 5]), (there, [6, 7, 8, 9, 10])):
            used = [(await client.post("/v1/launch/ai-quota/consume")).json() for _ in range(5)]
            assert [u["used"] for u in used] == expected
        for client in (here, there):
            refused = await client.post("/v1/launch/ai-quota/consume")
            assert refused.status_code == 429 and refused.json()["error"] == "ai_quota_exceeded"
            assert (await client.get("/v1/launch/ai-quota")).json()["remaining"] == 0


async def test_bad_tier_bodies(member: User) -> None:
    for body in [{"tier": "gold"}, {}, {"tier": "pro", "months": 2}, {"tier": 1}]:
        response = await member.post("/v1/launch/tiers/me", json=body)
        assert response.status_code == 422 and response.json()["error"] == "validation_error"


async def test_an_api_keys_rate_follows_the_users_tier(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    """Free: 300 requests a minute per key; paying for pro lifts it to 1200 at once."""
    await fund(wapp, fake, member, "15")
    key = await member.api_key("read")
    free = FREE.api_requests_per_min
    hold_the_window()  # the requests below all fall in one minute's budget
    async with client_for(wapp, headers=bearer(key)) as bot:
        answers = [(await bot.get("/v1/launch/ai-quota")).status_code for _ in range(free + 1)]
        assert answers == [200] * free + [429]
        refused = await bot.get("/v1/launch/ai-quota")
        assert f"{free} requests per minute" in refused.json()["msg"]
        assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
        assert (await bot.get("/v1/launch/ai-quota")).status_code == 200


async def test_ai_messages_are_limited_to_ten_a_minute(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    await fund(wapp, fake, member, "15")
    assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
    hold_the_window()
    answers = [(await member.post("/v1/launch/ai-quota/consume")).status_code for _ in range(11)]
    assert answers == [200] * 10 + [429]
    assert (await member.get("/v1/launch/ai-quota")).json() | {"resets_at": 0} == {
        "limit": 100,
        "used": 10,
        "remaining": 90,
        "resets_at": 0,
    }


async def test_a_webhooks_alerts_per_minute_follow_the_owners_tier(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    """Free: 10 alerts a minute per webhook; pro: 60 (the 3-minute burst limit stays)."""
    await fund(wapp, fake, member, "15")
    portfolio = await member.portfolio()
    token = await member.webhook_token(portfolio["id"])
    hold_the_window()
    async with client_for(wapp) as tradingview:

        async def alert() -> int:
            sent = await tradingview.post(f"/webhook/tv/{token}", content=b"close BTCUSDT")
            return sent.status_code

        assert [await alert() for _ in range(11)] == [200] * 10 + [429]
        assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
        assert await alert() == 200


async def test_after_a_downgrade_webhooks_over_the_limit_are_paused_not_deleted(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    await fund(wapp, fake, member, "30")
    assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
    portfolio = await member.portfolio()
    first = await member.webhook_token(portfolio["id"])
    second = await member.webhook_token(portfolio["id"])
    assert (await member.post("/v1/launch/tiers/me", json={"tier": "free"})).status_code == 200
    async with client_for(wapp) as tradingview:

        async def alert(token: str, body: bytes) -> tuple[int, str]:
            sent = await tradingview.post(f"/webhook/tv/{token}", content=body)
            return sent.status_code, sent.json().get("error", "")

        assert (await alert(first, b"close ETHUSDT"))[0] == 200
        assert await alert(second, b"close ETHUSDT") == (403, "tier_limit")
        listed = (await member.get(f"/v1/portfolios/{portfolio['id']}/webhook-tokens")).json()
        assert len(listed) == 2 and all(t["revoked_at"] is None for t in listed)  # kept
        assert (await member.post("/v1/launch/tiers/me", json={"tier": "pro"})).status_code == 200
        assert (await alert(second, b"close SOLUSDT"))[0] == 200
