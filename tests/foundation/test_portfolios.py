"""Portfolios and the credentials bound to them (foundation point 6)."""

import re
from typing import Any

from fastapi import FastAPI
from sqlalchemy import select

from papertrade.models import CompatKey, WebhookToken
from tests.conftest import ORIGIN, User, bearer, client_for


async def test_create_with_defaults_and_short_code(user: User) -> None:
    portfolio = await user.portfolio()
    assert portfolio["initial_balance"] == 10000 and portfolio["balance"] == 10000
    assert portfolio["visibility"] == "private"
    assert re.fullmatch(r"P\d{7}", portfolio["code"])
    assert portfolio["code"] == f"P{portfolio['id']:07d}"
    assert isinstance(portfolio["created_at"], int) and portfolio["created_at"] > 1_600_000_000_000


async def test_initial_balance_keeps_six_decimals(user: User) -> None:
    portfolio = await user.portfolio(initial_balance="1234.567891")
    assert portfolio["balance"] == 1234.567891


async def test_invalid_portfolio_bodies(user: User) -> None:
    for body in [
        {"name": ""},
        {"name": "x", "initial_balance": -5},
        {"name": "x", "initial_balance": "abc"},
        {"name": "x", "initial_balance": "1.0000001"},
        {"name": "x", "visibility": "secret"},
        {"name": "x", "unknown": 1},
    ]:
        response = await user.post("/v1/portfolios", json=body)
        assert response.status_code == 422, body
        assert response.json()["error"] == "validation_error"


async def test_my_lists_only_own_and_works_with_api_key(
    user: User, user_factory: Any, app: FastAPI
) -> None:
    mine = await user.portfolio(name="mine")
    other: User = await user_factory()
    await other.portfolio(name="theirs")
    key = await user.api_key("read")
    async with client_for(app) as client:
        response = await client.get("/v1/portfolios/my", headers=bearer(key))
    assert [p["id"] for p in response.json()] == [mine["id"]]


async def test_another_users_private_portfolio_is_404(user: User, user_factory: Any) -> None:
    other: User = await user_factory()
    theirs = await other.portfolio()
    for response in (
        await user.get(f"/v1/portfolios/{theirs['id']}"),
        await user.patch(f"/v1/portfolios/{theirs['id']}", json={"name": "mine now"}),
        await user.delete(f"/v1/portfolios/{theirs['id']}"),
        await user.get(f"/v1/portfolios/by_code/{theirs['code']}"),
        await user.post(f"/v1/portfolios/{theirs['id']}/api-keys", json={}),
        await user.post(f"/v1/portfolios/{theirs['id']}/webhook-tokens"),
    ):
        assert response.status_code == 404
        assert response.json()["error"] == "portfolio_not_found"


async def test_by_code_public_for_everyone(user: User, anon: Any, user_factory: Any) -> None:
    public = await user.portfolio(visibility="public", name="open book")
    private = await user.portfolio()
    stranger: User = await user_factory()
    for viewer in (anon, stranger):
        seen = (await viewer.get(f"/v1/portfolios/by_code/{public['code']}")).json()
        # The public record, as on the public page: no internal id, wallet balance or fee rates.
        public_page = (await anon.get(f"/v1/portfolios/{public['code']}/public")).json()
        assert seen == public_page and seen["name"] == "open book"
        assert not {"id", "balance", "maker_fee_rate", "taker_fee_rate"} & set(seen)
    owned = (await user.get(f"/v1/portfolios/by_code/{public['code']}")).json()
    assert owned["id"] == public["id"] and owned["balance"] == 10000
    assert (await anon.get(f"/v1/portfolios/by_code/{private['code']}")).status_code == 404
    assert (await user.get(f"/v1/portfolios/by_code/{private['code']}")).status_code == 200
    for junk in ["X123", "P", "Pabc", "P" + "9" * 30]:
        assert (await anon.get(f"/v1/portfolios/by_code/{junk}")).status_code == 404


async def test_patch_and_delete(user: User, app: FastAPI) -> None:
    portfolio = await user.portfolio()
    patched = await user.patch(
        f"/v1/portfolios/{portfolio['id']}", json={"name": "renamed", "visibility": "public"}
    )
    assert patched.json()["name"] == "renamed" and patched.json()["visibility"] == "public"
    await user.compat_key(portfolio["id"])
    await user.webhook_token(portfolio["id"])
    assert (await user.delete(f"/v1/portfolios/{portfolio['id']}")).status_code == 200
    async with app.state.ctx.db.reader() as session:
        for model in (CompatKey, WebhookToken):
            rows = (
                await session.scalars(select(model).where(model.portfolio_id == portfolio["id"]))
            ).all()
            assert rows
            assert all(row.revoked_at is not None for row in rows)
    assert (await user.get(f"/v1/portfolios/{portfolio['id']}")).status_code == 404
    assert portfolio["id"] not in [p["id"] for p in (await user.get("/v1/portfolios/my")).json()]


async def test_compat_key_pair_shown_once_and_revocable(user: User) -> None:
    portfolio = await user.portfolio()
    created = await user.post(
        f"/v1/portfolios/{portfolio['id']}/api-keys", json={"note": "freqtrade"}
    )
    assert created.status_code == 201
    pair = created.json()
    assert re.fullmatch(r"[0-9a-f]{64}", pair["api_key"])
    assert re.fullmatch(r"[0-9a-f]{64}", pair["api_secret"])
    listing = await user.get(f"/v1/portfolios/{portfolio['id']}/api-keys")
    assert pair["api_secret"] not in listing.text and pair["api_key"] not in listing.text
    assert listing.json()[0]["note"] == "freqtrade"
    revoked = await user.delete(f"/v1/portfolios/{portfolio['id']}/api-keys/{pair['id']}")
    assert revoked.json()["revoked_at"] is not None
    kept = (await user.get(f"/v1/portfolios/{portfolio['id']}/api-keys")).json()
    assert kept[0]["id"] == pair["id"] and kept[0]["revoked_at"] is not None


async def test_webhook_token_url_and_revocation(user: User) -> None:
    portfolio = await user.portfolio()
    created = await user.post(f"/v1/portfolios/{portfolio['id']}/webhook-tokens")
    token = created.json()["webhook_token"]
    assert created.json()["url"] == f"{ORIGIN}/webhook/tv/{token}"
    token_id = created.json()["id"]
    revoked = await user.delete(f"/v1/portfolios/{portfolio['id']}/webhook-tokens/{token_id}")
    assert revoked.status_code == 200
    listing = (await user.get(f"/v1/portfolios/{portfolio['id']}/webhook-tokens")).json()
    assert listing[0]["revoked_at"] is not None and token not in str(listing)


async def test_portfolio_credentials_need_the_session(user: User, app: FastAPI) -> None:
    portfolio = await user.portfolio()
    key = await user.api_key("write")
    async with client_for(app) as client:
        response = await client.post(
            f"/v1/portfolios/{portfolio['id']}/api-keys", json={}, headers=bearer(key)
        )
    assert response.status_code == 403 and response.json()["error"] == "session_required"
