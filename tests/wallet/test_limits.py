"""Issue 30 part 4, limits that answered wrongly under concurrency, against the real app:
requests racing for the last AI message are told ai_quota_exceeded (not rate_limited), and one
user holds at most RECHARGE_MAX_PENDING (3) pending recharge orders, however many ask at once."""

import asyncio
from collections import Counter

from fastapi import FastAPI

from tests.conftest import User, sign_up
from tests.foundation.helpers import hold_the_window


async def test_racing_for_the_last_ai_message_answers_ai_quota_exceeded(member: User) -> None:
    """Free tier: 10 a day, and at most 10 a minute. 9 used, then 5 at once: one is counted,
    the other four are over the day's quota (not over the burst limit, which only the counted
    ones use)."""
    hold_the_window()
    for used in range(1, 10):
        counted = await member.post("/v1/launch/ai-quota/consume")
        assert counted.status_code == 200 and counted.json()["used"] == used, counted.text
    answers = await asyncio.gather(*(member.post("/v1/launch/ai-quota/consume") for _ in range(5)))
    seen = Counter((a.status_code, a.json().get("error")) for a in answers)
    assert seen == {(200, None): 1, (429, "ai_quota_exceeded"): 4}, [a.text for a in answers]
    quota = (await member.get("/v1/launch/ai-quota")).json()
    assert (quota["used"], quota["remaining"]) == (10, 0)


async def test_one_user_holds_at_most_three_pending_recharge_orders(
    member: User, wapp: FastAPI
) -> None:
    async def ask(amount: str) -> tuple[int, str | None]:
        response = await member.post("/v1/recharge/orders", json={"amount": amount})
        return response.status_code, response.json().get("error")

    outcomes = await asyncio.gather(*(ask("50") for _ in range(8)))
    assert Counter(outcomes) == {(201, None): 3, (409, "recharge_pending_limit"): 5}, outcomes
    refused = await member.post("/v1/recharge/orders", json={"amount": "51"})
    assert refused.status_code == 409
    assert refused.json()["error"] == "recharge_pending_limit"
    assert "cancel" in refused.json()["msg"]
    orders = (await member.get("/v1/recharge/orders")).json()
    assert [o["status"] for o in orders] == ["pending"] * 3

    # Everyone else still gets 50 at once (one user no longer holds every amount near it).
    other = await sign_up(wapp)
    try:
        theirs = await other.post("/v1/recharge/orders", json={"amount": "50"})
        assert theirs.status_code == 201, theirs.text
        await other.post(f"/v1/recharge/orders/{theirs.json()['id']}/cancel")
    finally:
        await other.client.aclose()

    # Cancelling one frees a place.
    cancelled = await member.post(f"/v1/recharge/orders/{orders[0]['id']}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    again = await member.post("/v1/recharge/orders", json={"amount": "50"})
    assert again.status_code == 201, again.text
    for order in (await member.get("/v1/recharge/orders")).json():
        await member.post(f"/v1/recharge/orders/{order['id']}/cancel")  # free the amounts
