"""Who may open /v1/ws: native API keys (header or auth message) and the session cookie only."""

import asyncio

import pytest
from fastapi import FastAPI
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.conftest import ORIGIN, User, sign_up
from tests.ws.helpers import Socket, socket, ws_url


async def _refused(url: str, headers: dict[str, str]) -> InvalidStatus:
    with pytest.raises(InvalidStatus) as caught:
        async with connect(url, additional_headers=headers):
            pass
    return caught.value


async def test_bearer_key_on_the_upgrade(live_url: str, user: User) -> None:
    key = await user.api_key(scope="read")
    async with socket(live_url, key) as ws:
        assert ws.seen[0]["authenticated"] is True
        assert ws.seen[0]["user_id"] == user.id
        assert (await ws.subscribe("mark_price:BTCUSDT"))["type"] == "subscribed"


async def test_legacy_path_is_the_same_endpoint(live_url: str, user: User) -> None:
    async with socket(live_url, await user.api_key(), path="/api/ws") as ws:
        assert (await ws.subscribe("mark_price:ETHUSDT"))["type"] == "subscribed"


async def test_auth_message_for_clients_without_headers(live_url: str, user: User) -> None:
    key = await user.api_key()
    async with socket(live_url) as ws:
        assert ws.seen[0]["authenticated"] is False
        refused = await ws.subscribe("mark_price:BTCUSDT")
        assert refused["type"] == "error" and refused["error"] == "unauthenticated"
        await ws.send(op="auth", key=key, id=7)
        assert await ws.wait_type("authenticated") == {
            "type": "authenticated",
            "user_id": user.id,
            "id": 7,
        }
        assert (await ws.subscribe("mark_price:BTCUSDT", request_id=2))["type"] == "subscribed"


@pytest.mark.parametrize(
    ("header", "code"),
    [
        ("Bearer ptk_not-a-real-key", "invalid_api_key"),
        ("Basic dXNlcjpwYXNz", "invalid_authorization"),
    ],
)
async def test_bad_upgrade_credentials_get_401_with_a_native_body(
    live_url: str, header: str, code: str
) -> None:
    refused = await _refused(ws_url(live_url), {"Authorization": header})
    assert refused.response.status_code == 401
    assert refused.response.body is not None
    import json

    body = json.loads(refused.response.body)
    assert body["error"] == code and body["msg"]


async def test_webhook_token_and_compat_key_are_not_websocket_credentials(
    live_url: str, user: User
) -> None:
    portfolio = await user.portfolio()
    token = await user.webhook_token(portfolio["id"])
    compat_key, _ = await user.compat_key(portfolio["id"])
    for credential in (token, compat_key):
        refused = await _refused(ws_url(live_url), {"Authorization": f"Bearer {credential}"})
        assert refused.response.status_code == 401
    # …nor through the auth message: the socket is told why and closed.
    async with socket(live_url) as ws:
        await ws.send(op="auth", key=token)
        error = await ws.wait_type("error")
        assert error["error"] == "invalid_api_key"
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


async def test_session_cookie_from_the_web_app(live_url: str, user: User) -> None:
    cookie = f"pt_session={user.client.cookies.get('pt_session')}"
    async with socket(live_url, headers={"Cookie": cookie, "Origin": ORIGIN}) as ws:
        assert ws.seen[0]["authenticated"] is True
    # A page of another site cannot ride the cookie.
    refused = await _refused(ws_url(live_url), {"Cookie": cookie, "Origin": "https://evil.example"})
    assert refused.response.status_code == 403


async def test_someone_elses_portfolio_is_not_found(
    live_url: str, user: User, user_factory: object
) -> None:
    other: User = await user_factory()  # type: ignore[operator]
    theirs = await other.portfolio()
    mine = await user.portfolio()
    async with socket(live_url, await user.api_key()) as ws:
        reply = await ws.subscribe(f"orders:{theirs['id']}", f"orders:{mine['id']}")
        assert reply["type"] == "error" and reply["error"] == "portfolio_not_found"
        assert (await ws.subscribe(f"orders:{mine['id']}", request_id=2))["type"] == "subscribed"


async def test_unauthenticated_socket_is_closed_after_the_deadline(
    fast_app: tuple[FastAPI, str],
) -> None:
    _, url = fast_app
    async with socket(url) as ws:
        error = await ws.wait_type("error", within=15)
        assert error["error"] == "auth_timeout"
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv(within=15)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


async def _closed_for_revocation(ws: Socket) -> None:
    error = await ws.wait_for(lambda m: m.get("type") == "error", within=15)
    assert error["error"] == "credential_revoked"
    with pytest.raises(ConnectionClosed) as closed:
        await _read_until_closed(ws)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4401


async def _read_until_closed(ws: Socket) -> None:
    while True:
        await ws.recv(within=15)


async def test_revoking_a_key_closes_its_open_sockets(fast_app: tuple[FastAPI, str]) -> None:
    app, url = fast_app
    owner = await sign_up(app)
    try:
        key = await owner.api_key()
        keys = (await owner.get("/v1/user/api-keys")).json()
        async with socket(url, key) as first, socket(url) as second:
            await second.send(op="auth", key=key)
            await second.wait_type("authenticated")
            response = await owner.delete(f"/v1/user/api-keys/{keys[0]['id']}")
            assert response.status_code == 200
            await asyncio.gather(_closed_for_revocation(first), _closed_for_revocation(second))
    finally:
        await owner.client.aclose()


async def test_signing_out_closes_the_sessions_sockets(fast_app: tuple[FastAPI, str]) -> None:
    app, url = fast_app
    owner = await sign_up(app)
    try:
        cookie = f"pt_session={owner.client.cookies.get('pt_session')}"
        async with socket(url, headers={"Cookie": cookie}) as ws:
            assert (await owner.post("/v1/auth/logout")).status_code == 200
            await _closed_for_revocation(ws)
    finally:
        await owner.client.aclose()


async def test_heartbeats_and_ping(fast_app: tuple[FastAPI, str]) -> None:
    app, url = fast_app
    owner = await sign_up(app)
    try:
        async with socket(url, await owner.api_key()) as ws:
            beat = await ws.wait_type("heartbeat", within=15)
            assert isinstance(beat["time"], int)
            await ws.send(op="ping", id="p1")
            pong = await ws.wait_type("pong")
            assert pong["id"] == "p1" and isinstance(pong["time"], int)
    finally:
        await owner.client.aclose()


async def test_protocol_mistakes_are_answered_not_fatal(live_url: str, user: User) -> None:
    async with socket(live_url, await user.api_key()) as ws:
        await ws.conn.send("not json")
        assert (await ws.wait_type("error"))["error"] == "invalid_json"
        await ws.send(op="dance", id=3)
        assert (await ws.wait_type("error"))["error"] == "unknown_op"
        for name, code in [
            ("kline:BTCUSDT:7m", "invalid_channel"),
            ("mark_price:NOPEUSDT", "invalid_symbol"),
            ("trades:BTCUSDT", "unknown_channel"),
            ("orders:abc", "invalid_channel"),
        ]:
            reply = await ws.subscribe(name, request_id=name)
            assert reply["type"] == "error" and reply["error"] == code, reply
            assert reply["msg"]
        await ws.send(op="ping", id=9)
        assert (await ws.wait_type("pong"))["id"] == 9
