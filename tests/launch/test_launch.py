"""Registration modes, invitation codes (atomic use count) and the waitlist (double opt-in,
referrals, invites from the top)."""

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update

from papertrade.config import Settings
from papertrade.launch import codes, service
from papertrade.models import InviteCode, InviteUse, OutboxEvent
from tests.conftest import ORIGIN, client_for, running_app, sign_up, unique_email
from tests.foundation.helpers import hold_the_window


@pytest.fixture(scope="module")
async def gated(
    settings: Settings, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[FastAPI]:
    """The session database, seen by an app in invite_only mode."""
    async with running_app(settings.model_copy(update={"registration_mode": "invite_only"})) as app:
        yield app


async def _signup(app: FastAPI, **body: Any) -> httpx.Response:
    async with client_for(app) as client:
        payload = {"email": unique_email(), "password": "s3cret-pass-words", **body}
        return await client.post("/v1/auth/signup", json=payload, headers={"Origin": ORIGIN})


async def _codes_of(app: FastAPI, email: str | None = None) -> tuple[Any, list[dict[str, Any]]]:
    user = await sign_up(app, email=email)
    listed = (await user.get("/v1/launch/invitations")).json()
    return user, listed


def test_codes_are_crockford_and_typed_forgivingly() -> None:
    made = {codes.new_code() for _ in range(200)}
    assert all(len(c) == 8 and not set(c) & set("ILOU") for c in made)
    assert codes.normalise("abcd-efgh") == "ABCDEFGH"
    assert codes.normalise("0oil 1234") == "00111234"
    assert codes.normalise("ABCDEFGU") is None and codes.normalise("short") is None


async def test_every_new_user_gets_three_single_use_codes(app: FastAPI) -> None:
    user, listed = await _codes_of(app)
    try:
        assert len(listed) == 3
        for code in listed:
            assert code["max_uses"] == 1 and code["use_count"] == 0 and code["enabled"]
            assert code["expires_at"] - code["created_at"] == 14 * 86_400_000
    finally:
        await user.client.aclose()


async def test_invite_only_needs_a_live_code_and_counts_each_use(
    app: FastAPI, gated: FastAPI
) -> None:
    async with client_for(gated) as anon:
        assert (await anon.get("/v1/launch/registration")).json() == {"mode": "invite_only"}
    refused = await _signup(gated)
    assert refused.status_code == 403 and refused.json()["error"] == "invite_required"
    wrong = await _signup(gated, invite_code="ZZZZZZZZ")
    assert wrong.status_code == 403 and wrong.json()["error"] == "invite_required"
    inviter, listed = await _codes_of(app)
    code = listed[0]["code"]
    async with client_for(gated) as anon:
        checked = await anon.get("/v1/launch/invitations/check", params={"code": code.lower()})
        assert checked.json() == {"valid": True}
    admitted = await _signup(gated, invite_code=code.lower())  # typed in lower case
    assert admitted.status_code == 201, admitted.text
    again = await _signup(gated, invite_code=code)  # single use
    assert again.status_code == 403
    after = (await inviter.get("/v1/launch/invitations")).json()[0]
    assert after["use_count"] == 1
    async with app.state.ctx.db.reader() as session:
        use = await session.get(InviteUse, admitted.json()["id"])
    assert use is not None and use.invited_by == inviter.id
    await inviter.client.aclose()


async def test_a_refused_signup_leaves_no_account(gated: FastAPI) -> None:
    email = unique_email()
    assert (await _signup(gated, email=email)).status_code == 403
    async with client_for(gated) as anon:
        login = await anon.post(
            "/v1/auth/login",
            json={"email": email, "password": "s3cret-pass-words"},
            headers={"Origin": ORIGIN},
        )
    assert login.status_code == 401


async def test_expired_and_disabled_codes_let_nobody_in(app: FastAPI, gated: FastAPI) -> None:
    inviter, listed = await _codes_of(app)
    expired, disabled = listed[0]["code"], listed[1]["code"]
    async with app.state.ctx.transaction() as uow:
        await uow.session.execute(
            update(InviteCode).where(InviteCode.code == expired).values(expires_at=1)
        )
        await uow.session.execute(
            update(InviteCode).where(InviteCode.code == disabled).values(enabled=False)
        )
    for code in (expired, disabled):
        assert (await _signup(gated, invite_code=code)).status_code == 403
    await inviter.client.aclose()


async def test_racing_for_the_last_use_lets_exactly_one_in(app: FastAPI, gated: FastAPI) -> None:
    async with app.state.ctx.transaction() as uow:
        made = await service.create_code(uow, owner_id=None, max_uses=3)
        code = made.code
    outcomes = await asyncio.gather(*(_signup(gated, invite_code=code) for _ in range(6)))
    assert sorted(r.status_code for r in outcomes) == [201] * 3 + [403] * 3
    async with app.state.ctx.db.reader() as session:
        row = await session.scalar(select(InviteCode).where(InviteCode.code == code))
    assert row is not None and row.use_count == 3


async def _events(app: FastAPI, kind: str) -> list[dict[str, Any]]:
    async with app.state.ctx.db.reader() as session:
        rows = await session.scalars(select(OutboxEvent).where(OutboxEvent.type == kind))
        return [orjson.loads(row.data) for row in rows]


async def _join(app: FastAPI, email: str, ref: str | None = None) -> str:
    """Join and follow the e-mailed link (the token, as the e-mail consumer reads it)."""
    async with client_for(app) as anon:
        body = {"email": email, **({"referral_code": ref} if ref else {})}
        joined = await anon.post("/v1/launch/waitlist", json=body)
        assert joined.status_code == 202, joined.text
        token = [e for e in await _events(app, "waitlist.joined") if e["email"] == email][-1]
        verified = await anon.post(
            "/v1/launch/waitlist/verify", json={"token": token["verify_token"]}
        )
        assert verified.status_code == 200, verified.text
        return str(verified.json()["referral_code"])


async def _position(app: FastAPI, code: str) -> dict[str, Any]:
    async with client_for(app) as anon:
        response = await anon.get("/v1/launch/waitlist/position", params={"referral_code": code})
        return dict(response.json())


async def test_the_waitlist_double_opt_in_referrals_and_invites(
    app: FastAPI, gated: FastAPI
) -> None:
    tag = uuid.uuid4().hex[:6]
    first = await _join(app, f"first-{tag}@example.com")
    second = await _join(app, f"second-{tag}@example.com")
    assert (await _position(app, second))["position"] == (await _position(app, first))[
        "position"
    ] + 1
    # an unverified join holds no place
    async with client_for(app) as anon:
        await anon.post("/v1/launch/waitlist", json={"email": f"ghost-{tag}@example.com"})
        same = await anon.post("/v1/launch/waitlist", json={"email": f"first-{tag}@example.com"})
    assert same.json()["ok"] is True  # already on it: the same answer
    # a verified referral moves the referrer up ten places: past `first`
    before = (await _position(app, second))["position"]
    await _join(app, f"friend-{tag}@example.com", ref=second)
    moved = await _position(app, second)
    assert moved["referrals"] == 1 and moved["position"] < before
    assert moved["position"] < (await _position(app, first))["position"]
    # the operator invites from the top; the code arrives through the durable event
    async with app.state.ctx.transaction() as uow:
        line = await service._line(uow.session)
        invited = await service.invite_top(uow, len(line))
    mine = dict(invited)[f"second-{tag}@example.com"]
    sent = [
        e
        for e in await _events(app, "waitlist.invited")
        if e["email"] == f"second-{tag}@example.com"
    ]
    assert sent == [{"email": f"second-{tag}@example.com", "code": mine}]
    assert (await _position(app, second))["invited"] is True
    assert (
        await _signup(gated, email=f"second-{tag}@example.com", invite_code=mine)
    ).status_code == 201


async def test_waitlist_joins_are_limited_per_address(settings: Settings) -> None:
    limited = settings.model_copy(update={"rate_limit_waitlist_ip_per_hour": 2})
    async with running_app(limited) as app, client_for(app) as anon:
        hold_the_window()  # the three joins count in one hour's window
        answers = [
            (await anon.post("/v1/launch/waitlist", json={"email": unique_email()})).status_code
            for _ in range(3)
        ]
    assert answers == [202, 202, 429]


async def test_waitlist_mode_refuses_a_signup_without_a_code_and_points_to_the_waitlist(
    app: FastAPI, settings: Settings
) -> None:
    email = unique_email()
    async with app.state.ctx.transaction() as uow:
        code = (await service.create_code(uow, owner_id=None)).code
    waiting = settings.model_copy(update={"registration_mode": "waitlist"})
    async with running_app(waiting) as gate:
        async with client_for(gate) as anon:
            assert (await anon.get("/v1/launch/registration")).json() == {"mode": "waitlist"}
        for body in ({}, {"invite_code": ""}, {"invite_code": "ZZZZZZZZ"}):
            refused = await _signup(gate, email=email, **body)
            assert refused.status_code == 403, body
            assert refused.json()["error"] == "invite_required"
            assert "join the waitlist" in refused.json()["msg"]
        async with client_for(gate) as anon:
            login = await anon.post(
                "/v1/auth/login",
                json={"email": email, "password": "s3cret-pass-words"},
                headers={"Origin": ORIGIN},
            )
        assert login.status_code == 401  # no account was made
        assert (await _signup(gate, email=email, invite_code=code)).status_code == 201


async def test_waitlist_bad_input(app: FastAPI) -> None:
    async with client_for(app) as anon:
        for body in [{}, {"email": "not-an-email"}, {"email": "a@example.com", "x": 1}]:
            response = await anon.post("/v1/launch/waitlist", json=body)
            assert response.status_code == 422, body
        wrong = await anon.post("/v1/launch/waitlist/verify", json={"token": "wl_nothing"})
        assert wrong.status_code == 404 and wrong.json()["error"] == "waitlist_not_found"
        unknown = await anon.get("/v1/launch/waitlist/position", params={"referral_code": "AAAA"})
        assert unknown.status_code == 404


async def test_operators_make_codes_and_invite_from_the_cli_functions(
    app: FastAPI, gated: FastAPI, settings: Settings
) -> None:
    from papertrade.launch import operator

    made = await operator.create_codes(settings, count=2, max_uses=None, days=None, note="x")
    lines = made.splitlines()
    assert len(lines) == 2 and all(codes.normalise(line) == line for line in lines)
    for _ in range(3):  # unlimited uses, no expiry
        response = await _signup(gated, invite_code=lines[0])
        assert response.status_code == 201, response.text
    tag = uuid.uuid4().hex[:6]
    await _join(app, f"cli-{tag}@example.com")
    exported = (await operator.export_waitlist(settings)).splitlines()
    assert exported[0] == "position,email,referral_code,referrals,verified_at,invited_at,created_at"
    waiting = [line for line in exported[1:] if line.startswith(tuple("123456789"))]
    assert any(f"cli-{tag}@example.com" in line for line in waiting)
    report = await operator.invite_waitlist(settings, 1000)
    assert f"cli-{tag}@example.com" in report
    assert await operator.invite_waitlist(settings, 1000) == "nobody is waiting"


async def test_the_signup_page_prefills_a_code_and_asks_for_one_when_gated(
    app: FastAPI, gated: FastAPI
) -> None:
    async with client_for(app) as anon:
        plain = await anon.get("/signup")
        assert 'id="invite-code"' not in plain.text  # open: no field unless a code came along
        linked = await anon.get("/signup", params={"code": '7KQ2M9XD"><script>'})
        assert 'value="7KQ2M9XD&#34;&gt;&lt;script&gt;"' in linked.text  # escaped
    async with client_for(gated) as anon:
        assert 'id="invite-code"' in (await anon.get("/signup")).text
