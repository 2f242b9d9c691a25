"""The wallet: balance, ledger (paged and CSV), transfers into the user's own portfolios (one
way: portfolio money is paper and never moves into the wallet)."""

import csv
import io
from decimal import Decimal

from fastapi import FastAPI

from tests.conftest import User, bearer, client_for, sign_up
from tests.fakes.trongrid import FakeTronGrid
from tests.wallet.conftest import balance, fund


async def _transfer(
    user: User, direction: str, portfolio_id: int, amount: str
) -> dict[str, object]:
    response = await user.post(
        "/v1/user/wallet/transfers",
        json={"direction": direction, "portfolio_id": portfolio_id, "amount": amount},
    )
    return {"status": response.status_code, **response.json()}


async def test_a_new_wallet_is_empty(member: User) -> None:
    assert (await member.get("/v1/user/wallet")).json() == {"balance": 0, "ledger_balance": 0}
    assert (await member.get("/v1/user/wallet/ledger")).json() == []


async def test_transfers_move_money_on_both_ledgers(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    await fund(wapp, fake, member, "100")
    portfolio = await member.portfolio(initial_balance=1000)
    into = await _transfer(member, "to_portfolio", portfolio["id"], "40.5")
    assert into == {"status": 200, "wallet_balance": 59.5, "portfolio_balance": 1040.5}
    assert await balance(member) == Decimal("59.5")
    equity = (await member.get(f"/v1/portfolios/{portfolio['id']}/equity")).json()
    assert equity["balance"] == equity["ledger_balance"] == 1040.5
    rows = (await member.get(f"/v1/portfolios/{portfolio['id']}/ledger")).json()
    assert [(r["kind"], r["amount"]) for r in rows[:1]] == [("wallet_transfer", 40.5)]
    wallet_rows = (await member.get("/v1/user/wallet/ledger")).json()
    assert [(r["kind"], r["amount"], r["portfolio_id"]) for r in wallet_rows[:1]] == [
        ("wallet_transfer", -40.5, portfolio["id"]),
    ]


async def test_portfolio_money_never_moves_into_the_wallet(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    """Issue 30: a free top-up minted paper money that a transfer then made wallet money (which
    buys tiers and pays other users). Out of a portfolio is refused, whatever the amount, and
    nothing moves on either ledger."""
    await fund(wapp, fake, member, "10")
    portfolio = await member.portfolio(initial_balance=1000)
    topped = await member.post(f"/v1/portfolios/{portfolio['id']}/top-up", json={"amount": "5000"})
    assert topped.status_code == 200, topped.text
    for amount in ("1", "5000", "0.000001"):
        out = await _transfer(member, "from_portfolio", portfolio["id"], amount)
        assert out["status"] == 400 and out["error"] == "portfolio_money_is_paper", out
        assert "paper" in str(out["msg"])
    assert await balance(member) == Decimal("10")
    after = (await member.get(f"/v1/portfolios/{portfolio['id']}")).json()
    assert after["balance"] == 6000
    kinds = [r["kind"] for r in (await member.get("/v1/user/wallet/ledger")).json()]
    assert kinds == ["recharge"]
    bought = await member.post("/v1/launch/tiers/me", json={"tier": "elite"})
    assert bought.status_code == 409 and bought.json()["error"] == "insufficient_funds"


async def test_no_transfer_takes_more_than_there_is(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    await fund(wapp, fake, member, "10")
    portfolio = await member.portfolio(initial_balance=5)
    too_much = await _transfer(member, "to_portfolio", portfolio["id"], "10.000001")
    assert too_much["status"] == 409 and too_much["error"] == "insufficient_funds"
    assert await balance(member) == Decimal("10")
    after = (await member.get(f"/v1/portfolios/{portfolio['id']}")).json()
    assert after["balance"] == 5


async def test_another_users_portfolio_is_404_and_read_keys_cannot_move_money(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    await fund(wapp, fake, member, "10")
    other = await sign_up(wapp)
    try:
        theirs = await other.portfolio()
        response = await _transfer(member, "to_portfolio", theirs["id"], "1")
        assert response["status"] == 404 and response["error"] == "portfolio_not_found"
        assert (await other.get("/v1/user/wallet")).json()["balance"] == 0
    finally:
        await other.client.aclose()
    key = await member.api_key("read")
    async with client_for(wapp) as client:
        body = {"direction": "to_portfolio", "portfolio_id": theirs["id"], "amount": "1"}
        refused = await client.post("/v1/user/wallet/transfers", json=body, headers=bearer(key))
        assert refused.status_code == 403 and refused.json()["error"] == "read_only_key"
        seen = await client.get("/v1/user/wallet", headers=bearer(key))
        assert seen.json()["balance"] == 10


async def test_bad_transfer_bodies(member: User) -> None:
    for body in [
        {"direction": "sideways", "portfolio_id": 1, "amount": "1"},
        {"direction": "to_portfolio", "portfolio_id": 0, "amount": "1"},
        {"direction": "to_portfolio", "portfolio_id": 1, "amount": "0"},
        {"direction": "to_portfolio", "portfolio_id": 1, "amount": "1.0000001"},
        {"direction": "to_portfolio", "portfolio_id": 1, "amount": "1e3"},
        {"direction": "to_portfolio", "portfolio_id": 1},
    ]:
        response = await member.post("/v1/user/wallet/transfers", json=body)
        assert response.status_code == 422, body
        assert response.json()["error"] == "validation_error"


async def test_history_pages_and_exports_as_csv(
    member: User, wapp: FastAPI, fake: FakeTronGrid
) -> None:
    # amounts another test's pending order holds get the next cent: use what was paid
    paid = [Decimal(str((await fund(wapp, fake, member, a))["pay_amount"])) for a in "123"]
    first = (await member.get("/v1/user/wallet/ledger", params={"limit": 2})).json()
    assert [Decimal(str(r["amount"])) for r in first] == [paid[2], paid[1]]
    rest = await member.get(
        "/v1/user/wallet/ledger", params={"limit": 2, "before_id": first[-1]["id"]}
    )
    assert [Decimal(str(r["amount"])) for r in rest.json()] == [paid[0]]
    exported = await member.get("/v1/user/wallet/ledger.csv")
    assert exported.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(exported.text)))
    assert [(r["kind"], r["amount"], r["balance_after"]) for r in rows] == [
        ("recharge", f"{paid[0]:.6f}", f"{paid[0]:.6f}"),
        ("recharge", f"{paid[1]:.6f}", f"{paid[0] + paid[1]:.6f}"),
        ("recharge", f"{paid[2]:.6f}", f"{sum(paid):.6f}"),
    ]
