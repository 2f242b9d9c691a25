"""Authorization walk over every route that names an owned object (issue #7 point 5).

User A owns two portfolios (one private, one public), orders (resting and filled), a native API
key, a compatible (/fapi) key pair, a webhook token and a received signal. User B calls every
such route of the running app with A's ids: with its session cookie and with its own write API
key on /v1 (and the legacy prefix), with its compatible key on /fapi (both addresses), with its
own webhook token, over the WebSocket, and on the web pages. Every answer must be a refusal in
the surface's documented shape (or, where B acts on its own portfolio, B's data only), nothing of
A's may show in any answer, and nothing of A's may change.

The list of routes comes from the app itself (tests/hostile/surface.py): a new route that takes
an id, a portfolio_id/…_id field, or a new signed /fapi endpoint, fails
`test_the_walk_covers_every_route_that_names_an_object` until a probe below covers it.
"""

import asyncio
import contextlib
import hashlib
import hmac
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import orjson
from fastapi import FastAPI
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from papertrade.auth.v1 import session_only
from papertrade.fapi.dispatch import REGISTRY
from papertrade.models import LiveAccount, TelegramChannel
from papertrade.recharge import service as recharges
from papertrade.trading.enums import LedgerKind
from papertrade.wallet import service as wallets
from tests.conftest import ORIGIN, User, bearer, client_for, sign_up
from tests.hostile.surface import RouteInfo, RouteKey, routes
from tests.trading_api.helpers import market, order, set_price
from tests.ws.helpers import Socket, socket, ws_url

A_BALANCE = "77777"  # A's balances start with 7777; B's are 10000: a leak is visible
SAFE = {"GET", "HEAD", "OPTIONS"}

# Routes with a path parameter that names nothing anyone owns (checked by the coverage test).
NOT_OWNED = {
    RouteKey("GET", "/markets/{symbol}"): "a market page; the symbol is public",
    RouteKey("GET", "/app/{rest:path}"): "the web app's 404 for unknown pages",
    RouteKey("GET", "/static/app/{path:path}"): "static CSS/JS/images",
    RouteKey("GET", "/v1/chain/roots/{day}"): "a day's attestation root is public",
    RouteKey("GET", "/api/chain/roots/{day}"): "a day's attestation root is public",
    RouteKey("GET", "/signup"): "?code= only pre-fills the sign-up form",
    RouteKey("GET", "/email/verify"): "the page only shows a button; the API checks the token",
    RouteKey("GET", "/password/reset"): "the page only shows a form; the API checks the token",
    RouteKey("GET", "/u/{user_id}"): "a public profile page (its API shows no e-mail)",
    **{
        RouteKey(method, prefix + path): why
        for prefix in ("/v1", "/api")
        for method, path, why in (
            ("POST", "/auth/signup", "an invitation code is made to be handed to others"),
            ("GET", "/launch/invitations/check", "says only whether a shared code is live"),
            ("POST", "/launch/waitlist", "a referral code is made to be shared"),
            ("GET", "/launch/waitlist/position", "what a shared referral link shows"),
            ("GET", "/users/{user_id}/profile", "a public profile (no e-mail, no private names)"),
            ("GET", "/users/{user_id}/avatar", "a public avatar"),
        )
    },
}


# -- the world: what A owns, what B holds ---------------------------------------------------------


@dataclass
class World:
    a: User
    b: User
    tag: str
    a_pid: int
    a_code: str
    a_pub_pid: int
    a_pub_code: str
    a_rest_id: int
    a_rest_cid: str
    a_fill_id: int
    a_fill_cid: str
    a_pub_rest_id: int
    a_pub_cid: str
    a_key: str
    a_key_id: int
    a_compat_id: int
    a_compat_key: str
    a_compat_secret: str
    a_token_id: int
    a_token: str
    a_signal_id: int
    a_fill_row_ids: set[int]
    a_ledger_ids: set[int]
    a_strings: set[str]  # names, notes, key and token prefixes, the email
    b_key: str
    b_pid: int
    b_compat_key: str
    b_compat_secret: str
    b_token: str
    # A's strategies (private and public), a backtest and a deployment; B's own strategy
    a_strategy_id: int = 0
    a_strategy_code: str = ""
    a_pub_strategy_id: int = 0
    a_backtest_id: int = 0
    a_deployment_id: int = 0
    b_strategy_id: int = 0
    a_stop_id: int = 0  # a waiting conditional order of A's
    a_notification_id: int = 0  # the inbox notice of A's market fill
    a_source_id: int = 0  # A's Finnhub webhook source
    a_recharge_id: int = 0
    a_feedback_id: int = 0
    a_relation_id: int = 0
    a_subscription_id: int = 0
    a_comment_id: int = 0
    a_strategy_comment_id: int = 0  # A's comment on A's private strategy
    a_live_id: int = 0  # A's live account (a row: no exchange is needed to be refused)
    a_channel_id: int = 0  # A's connected Telegram channel (a row: no bot needed to refuse)

    @property
    def a_pids(self) -> set[int]:
        return {self.a_pid, self.a_pub_pid}

    @property
    def a_order_ids(self) -> set[int]:
        return {self.a_rest_id, self.a_fill_id, self.a_pub_rest_id, self.a_stop_id}

    @property
    def beyond_every_id(self) -> int:
        return max(self.a_order_ids | self.a_ledger_ids | self.a_fill_row_ids) + 10**6


async def _created(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 201, response.text
    return dict(response.json())


async def build_world(app: FastAPI, a: User, b: User) -> World:
    tag = uuid.uuid4().hex[:10]
    await set_price(app, "BTCUSDT", "60000")
    await set_price(app, "ETHUSDT", "3000")
    private = await a.portfolio(
        name=f"A-private-{tag}", description=f"A-desc-{tag}", initial_balance=A_BALANCE
    )
    public = await a.portfolio(
        name=f"A-public-{tag}", initial_balance=A_BALANCE, visibility="public"
    )
    pid, pub = private["id"], public["id"]
    lever = await a.post(
        f"/v1/portfolios/{pid}/leverage", json={"symbol": "ETHUSDT", "leverage": 10}
    )
    assert lever.status_code == 200, lever.text
    resting = {
        "symbol": "BTCUSDT",
        "side": "buy",
        "type": "limit",
        "quantity": "0.01",
        "price": "30000",
    }
    rest = await order(a, portfolio_id=pid, client_order_id=f"a-rest-{tag}", **resting)
    pub_rest = await order(a, portfolio_id=pub, client_order_id=f"a-pub-{tag}", **resting)
    filled = await market(a, pid, "ETHUSDT", "buy", "0.1", client_order_id=f"a-fill-{tag}")
    assert rest["status"] == "new" and filled["status"] == "filled", (rest, filled)
    stop = await _created(
        await a.post(
            "/v1/conditional-order",
            json={
                "portfolio_id": pid,
                "symbol": "ETHUSDT",
                "side": "sell",
                "type": "stop_market",
                "trigger_price": "2000",
                "close_position": True,
            },
        )
    )
    key = await _created(
        await a.post("/v1/user/api-keys", json={"note": f"A-key-{tag}", "scope": "write"})
    )
    compat = await _created(
        await a.post(f"/v1/portfolios/{pid}/api-keys", json={"note": f"A-compat-{tag}"})
    )
    token = await _created(await a.post(f"/v1/portfolios/{pid}/webhook-tokens"))
    async with client_for(app) as sender:
        alert = await sender.post(
            f"/webhook/tv/{token['webhook_token']}",
            content=b"close SOLUSDT",
            headers={"Content-Type": "text/plain"},
        )
    assert alert.status_code == 200, alert.text
    fills = (await a.get(f"/v1/portfolios/{pid}/fills")).json()
    ledger = (await a.get(f"/v1/portfolios/{pid}/ledger")).json()
    ledger += (await a.get(f"/v1/portfolios/{pub}/ledger")).json()
    b_pid = (await b.portfolio(name=f"B-{tag}"))["id"]
    b_compat_key, b_compat_secret = await b.compat_key(b_pid)
    a_notification_id = await _inbox_notice_of(a, filled["id"])
    source = await _created(await a.post("/v1/webhook-sources", json={"provider": "finnhub"}))
    a_recharge_id = await _a_recharge_order(app, a.id)
    feedback = await a.post("/v1/feedback", json={"category": "idea", "text": f"A-idea-{tag}"})
    assert feedback.status_code == 201, feedback.text
    # A copies a third user's public portfolio (copying one's own is refused: self-dealing)
    leader = await sign_up(app)
    led = await leader.portfolio(name=f"C-led-{tag}", visibility="public")
    await leader.client.aclose()
    relation = await a.post(
        "/v1/copy/relations",
        json={
            "leader_portfolio_id": led["id"],
            "portfolio_id": pid,
            "mode": "fixed_ratio",
            "allocation": 100,
        },
    )
    assert relation.status_code == 201, relation.text
    subscription = await a.post("/v1/subscribe", json={"portfolio_id": pub})
    assert subscription.status_code == 201, subscription.text
    note = await a.post("/v1/comments", json={"portfolio_id": pid, "text": f"A-note-{tag}"})
    assert note.status_code == 201, note.text
    world = World(
        a_comment_id=note.json()["id"],
        a_relation_id=relation.json()["id"],
        a_subscription_id=subscription.json()["id"],
        a_recharge_id=a_recharge_id,
        a_feedback_id=feedback.json()["id"],
        a=a,
        b=b,
        tag=tag,
        a_pid=pid,
        a_code=private["code"],
        a_pub_pid=pub,
        a_pub_code=public["code"],
        a_rest_id=rest["id"],
        a_rest_cid=rest["client_order_id"],
        a_fill_id=filled["id"],
        a_fill_cid=filled["client_order_id"],
        a_pub_rest_id=pub_rest["id"],
        a_pub_cid=pub_rest["client_order_id"],
        a_stop_id=stop["id"],
        a_key=key["key"],
        a_key_id=key["id"],
        a_compat_id=compat["id"],
        a_compat_key=compat["api_key"],
        a_compat_secret=compat["api_secret"],
        a_token_id=token["id"],
        a_token=token["webhook_token"],
        a_signal_id=alert.json()["signal_id"],
        a_fill_row_ids={f["id"] for f in fills},
        a_ledger_ids={e["id"] for e in ledger},
        a_strings={
            private["name"],
            public["name"],
            f"A-desc-{tag}",
            f"A-key-{tag}",
            f"A-compat-{tag}",
            f"A-idea-{tag}",
            f"A-note-{tag}",
            key["prefix"],
            compat["prefix"],
            token["prefix"],
            a.email,
            *[code["code"] for code in (await a.get("/v1/launch/invitations")).json()],
        },
        b_key=await b.api_key("write"),
        b_pid=b_pid,
        b_compat_key=b_compat_key,
        b_compat_secret=b_compat_secret,
        b_token=await b.webhook_token(b_pid),
        a_notification_id=a_notification_id,
        a_source_id=source["id"],
    )
    await add_strategies(world)
    world.a_live_id = await _a_live_account(app, a.id)
    world.a_channel_id = await _a_channel(app, a.id, pid)
    return world


async def _a_channel(app: FastAPI, user_id: int, portfolio_id: int) -> int:
    chat_id = -1_000_000_000_000 - user_id
    async with app.state.ctx.transaction() as uow:
        uow.session.add(
            TelegramChannel(
                chat_id=chat_id, user_id=user_id, title="A-channel", portfolio_id=portfolio_id
            )
        )
    return chat_id


async def _a_live_account(app: FastAPI, user_id: int) -> int:
    async with app.state.ctx.transaction() as uow:
        account = LiveAccount(
            user_id=user_id,
            exchange="binanceusdm",
            label="A-live",
            api_key="A-live-key",
            api_secret_encrypted=app.state.ctx.cipher.encrypt("A-live-secret"),
            withdrawals="disabled",
            sizing="ratio",
            sizing_value=Decimal(1),
            symbols="[]",
            status="active",
            kill_reason="",
            consecutive_errors=0,
            day="",
        )
        uow.session.add(account)
        await uow.session.flush()
        return account.id


async def _inbox_notice_of(user: User, order_id: int) -> int:
    """The id of the inbox notification of a fill (delivered after the commit)."""
    for _ in range(600):
        for note in (await user.get("/v1/inbox", params={"kind": "fill"})).json()["notifications"]:
            if note["data"].get("id") == order_id:
                return int(note["id"])
        await asyncio.sleep(0.05)
    raise AssertionError("the fill's notification never reached the inbox")


NEVER_FIRES = "symbol BTCUSDT\ntimeframe 1m\nwhen close < 0 then buy 0.01 qty\n"


async def add_strategies(w: World) -> None:
    """A's private and public strategy, a backtest and a deployment (whose rule never fires,
    so A's portfolio stays as the snapshot saw it); B's own strategy."""
    body = {"kind": "dsl", "name": f"A-strategy-{w.tag}", "source": NEVER_FIRES}
    private = await _created(await w.a.post("/v1/strategies", json=body))
    public = await _created(await w.a.post("/v1/strategies", json={**body, "visibility": "public"}))
    end = int(time.time() * 1000) // 60_000 * 60_000
    backtest = await w.a.post(
        f"/v1/strategies/{private['id']}/backtests", json={"start": end - 3_600_000, "end": end}
    )
    assert backtest.status_code == 202, backtest.text
    deployment = await _created(
        await w.a.post(
            f"/v1/strategies/{private['id']}/deployments", json={"portfolio_id": w.a_pid}
        )
    )
    theirs = await _created(await w.b.post("/v1/strategies", json={**body, "name": "B's"}))
    w.a_strategy_id, w.a_strategy_code = private["id"], private["code"]
    w.a_pub_strategy_id, w.a_backtest_id = public["id"], backtest.json()["id"]
    w.a_deployment_id, w.b_strategy_id = deployment["id"], theirs["id"]
    note = {"strategy_id": private["id"], "text": f"A-note-{w.tag}"}
    w.a_strategy_comment_id = (await _created(await w.a.post("/v1/comments", json=note)))["id"]


async def _a_recharge_order(app: FastAPI, user_id: int) -> int:
    """A pending recharge order of A's and money in A's wallet (the session app has recharge
    off, so through the services)."""
    ctx = app.state.ctx
    async with ctx.transaction() as uow:
        await wallets.credit(uow, user_id, LedgerKind.RECHARGE, Decimal(A_BALANCE), actor="test")
        made = await recharges.create(
            uow, user_id, Decimal(A_BALANCE), addresses=["TAuthorizationWalk"], expiry_ms=60_000
        )
        await uow.session.flush()
        return int(made.id)


# -- what "nothing of A's shows" means ------------------------------------------------------------


def _scalar_leaks(key: str, value: Any, strings: set[str]) -> list[str]:
    text = str(value)
    found = [f"{key}: {s!r}" for s in strings if s in text]
    if "balance" in key.lower() and text.lstrip("-").startswith("7777"):
        found.append(f"{key}: A's balance {text}")
    if key == "positionAmt" and float(text) != 0:
        found.append(f"positionAmt {text} (B holds no position)")
    return found


def _object_leaks(node: dict[str, Any], w: World) -> list[str]:
    ids = {
        "portfolio_id": w.a_pids,
        "orderId": w.a_order_ids,
        "order_id": w.a_order_ids,
        "algoId": w.a_order_ids,
        "tranId": w.a_ledger_ids,
        "token_id": {w.a_token_id},
    }
    found = [f"{name}={node[name]}" for name, own in ids.items() if node.get(name) in own]
    listed = node.get("order_ids")
    if isinstance(listed, list):
        found += [f"order_ids has {i}" for i in listed if i in w.a_order_ids]
    row = node.get("id")
    is_fill = "commission" in node and "side" in node and ("order_id" in node or "orderId" in node)
    if is_fill and row in w.a_fill_row_ids:
        found.append(f"fill {row}")
    if "balance_after" in node and row in w.a_ledger_ids:
        found.append(f"ledger entry {row}")
    if "token_id" in node and row == w.a_signal_id:
        found.append(f"signal {row}")
    return found


def leaks(body: Any, w: World, sent: str) -> list[str]:
    """Everything of A's in a response body (strings the request itself sent do not count)."""
    strings = {s for s in w.a_strings if s not in sent}
    found: list[str] = []
    stack: list[tuple[str, Any]] = [("", body)]
    while stack:
        key, node = stack.pop()
        if isinstance(node, dict):
            found += _object_leaks(node, w)
            stack.extend((str(name), value) for name, value in node.items())
        elif isinstance(node, list):
            stack.extend((key, item) for item in node)
        else:
            found += _scalar_leaks(key, node, strings)
    return found


def assert_no_leak(response: httpx.Response, w: World, what: object) -> None:
    sent = str(response.request.url) + response.request.content.decode(errors="replace")
    text = response.text
    try:
        body: Any = response.json()
    except ValueError:
        body = text  # HTML pages: the strings are what matters
    found = leaks(body, w, sent)
    assert not found, (what, found, text[:500])


def assert_native_error(
    response: httpx.Response, status: int, codes: set[str], what: object
) -> None:
    assert response.status_code == status, (what, response.status_code, response.text[:500])
    body = response.json()
    assert set(body) == {"error", "msg"}, (what, body)
    assert isinstance(body["error"], str) and isinstance(body["msg"], str), (what, body)
    assert body["error"] in codes, (what, body)


def assert_binance_error(response: httpx.Response, status: int, code: int, what: object) -> None:
    assert response.status_code == status, (what, response.status_code, response.text[:500])
    body = response.json()
    assert set(body) == {"code", "msg"}, (what, body)
    assert body["code"] == code and isinstance(body["msg"], str), (what, body)


# -- A's state, before and after ------------------------------------------------------------------

POSITION_FIELDS = ("symbol", "side", "quantity", "entry_price", "leverage", "realized_pnl")


async def snapshot(w: World) -> dict[str, Any]:
    """Everything of A's that a foreign call could change (mark-dependent numbers left out)."""
    a = w.a

    async def get(url: str, **params: Any) -> Any:
        response = await a.get(url, params=params)
        assert response.status_code == 200, (url, response.text)
        return response.json()

    state: dict[str, Any] = {
        "portfolios": await get("/v1/portfolios/my"),
        "api_keys": await get("/v1/user/api-keys"),
        "sources": await get("/v1/webhook-sources"),
        "source_events": await get(f"/v1/webhook-sources/{w.a_source_id}/events"),
        "fill_notice": [  # other notices of A's may still arrive: this one must not change
            n
            for n in (await get("/v1/inbox", kind="fill"))["notifications"]
            if n["id"] == w.a_notification_id
        ],
    }
    for pid in sorted(w.a_pids):
        positions = await get(f"/v1/portfolios/{pid}/positions")
        state[f"{pid}"] = {
            "portfolio": await get(f"/v1/portfolios/{pid}"),
            "orders": await get("/v1/order", portfolio_id=pid, status="all", limit=500),
            "positions": [{k: p[k] for k in POSITION_FIELDS} for p in positions],
            "balance": (await get(f"/v1/portfolios/{pid}/equity"))["balance"],
            "ledger": await get(f"/v1/portfolios/{pid}/ledger", limit=1000),
            "fills": await get(f"/v1/portfolios/{pid}/fills", limit=1000),
            "signals": await get(f"/v1/portfolios/{pid}/signals", limit=500),
            "compat_keys": await get(f"/v1/portfolios/{pid}/api-keys"),
            "webhook_tokens": await get(f"/v1/portfolios/{pid}/webhook-tokens"),
        }
    return state


# -- B's callers on /v1 ---------------------------------------------------------------------------

Send = Callable[..., Awaitable[httpx.Response]]


@dataclass
class NativeCaller:
    name: str
    send: Send
    uses_session: bool


def native_callers(w: World, key_client: httpx.AsyncClient) -> list[NativeCaller]:
    async def by_session(method: str, url: str, **kwargs: Any) -> httpx.Response:
        headers = {} if method in SAFE else w.b.write_headers()
        return await w.b.client.request(method, url, headers=headers, **kwargs)

    async def by_key(method: str, url: str, **kwargs: Any) -> httpx.Response:
        return await key_client.request(method, url, **kwargs)

    return [NativeCaller("session", by_session, True), NativeCaller("api key", by_key, False)]


# -- the /v1 probes -------------------------------------------------------------------------------

Values = Callable[[World], dict[str, Any]]


def nothing(w: World) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Probe:
    """One call of B's: `template` below the native prefix, filled from the world."""

    method: str
    template: str
    path: Values
    status: int
    errors: frozenset[str] = frozenset()
    query: Values = nothing
    body: Callable[[World], Any] | None = None
    once: bool = False  # B creates something of its own: one run, not one per caller/prefix


def on_a(
    method: str,
    template: str,
    *,
    body: Callable[[World], Any] | None = None,
    as_query: bool = False,
) -> list[Probe]:
    """The route called on each of A's portfolios: 404 portfolio_not_found."""

    def private(w: World) -> dict[str, Any]:
        return {"portfolio_id": w.a_pid}

    def public(w: World) -> dict[str, Any]:
        return {"portfolio_id": w.a_pub_pid}

    notfound = frozenset({"portfolio_not_found"})
    if as_query:
        return [
            Probe(method, template, nothing, 404, notfound, query=pick, body=body)
            for pick in (private, public)
        ]
    return [Probe(method, template, pick, 404, notfound, body=body) for pick in (private, public)]


def b_list_past_a(template: str) -> Probe:
    """B's own listing paged from beyond A's ids: 200 with B's rows only."""
    return Probe(
        "GET",
        template,
        lambda w: {"portfolio_id": w.b_pid},
        200,
        query=lambda w: {"before_id": w.beyond_every_id},
    )


def market_order(pid_of: Callable[[World], int]) -> Callable[[World], Any]:
    def body(w: World) -> Any:
        return {
            "portfolio_id": pid_of(w),
            "symbol": "ETHUSDT",
            "side": "sell",
            "type": "market",
            "quantity": "0.1",
        }

    return body


def b_order_with_a_client_id(w: World) -> Any:
    # A's client order id means nothing in B's portfolio: no 409 that would reveal it exists.
    return {
        "portfolio_id": w.b_pid,
        "symbol": "BTCUSDT",
        "side": "buy",
        "type": "limit",
        "quantity": "0.01",
        "price": "30000",
        "client_order_id": w.a_fill_cid,
    }


def conditional_on(pid: int) -> dict[str, Any]:
    return {
        "portfolio_id": pid,
        "symbol": "ETHUSDT",
        "side": "sell",
        "type": "stop_market",
        "trigger_price": "2000",
        "quantity": "0.1",
    }


PORTFOLIO = "/portfolios/{portfolio_id}"
STRATEGY = "/strategies/{strategy_id}"
NOT_FOUND_STRATEGY = frozenset({"strategy_not_found"})


def _a_strategy_ids(w: World, strategy_id: int) -> dict[str, Any]:
    return {
        "strategy_id": strategy_id,
        "backtest_id": w.a_backtest_id,
        "deployment_id": w.a_deployment_id,
        "command": "stop",
        "number": 1,
    }


def a_strategy(w: World) -> dict[str, Any]:
    return _a_strategy_ids(w, w.a_strategy_id)


def a_public_strategy(w: World) -> dict[str, Any]:
    return _a_strategy_ids(w, w.a_pub_strategy_id)


def _source(w: World) -> Any:
    return {"source": NEVER_FIRES}


STRATEGY_CALLS: list[tuple[str, str, Callable[[World], Any] | None]] = [
    ("PATCH", "", lambda w: {"name": "taken over"}),
    ("DELETE", "", None),
    ("POST", "/versions", _source),
    ("POST", "/backtests", lambda w: {"start": 0, "end": 3_600_000}),
    ("GET", "/backtests", None),
    ("GET", "/backtests/{backtest_id}", None),
    ("POST", "/deployments", lambda w: {"portfolio_id": w.b_pid}),
    ("GET", "/deployments", None),
    ("POST", "/deployments/{deployment_id}/{command}", None),
    ("POST", "/deployments/{deployment_id}/drift", None),
]
PRIVATE_READS = ["", "/versions", "/versions/{number}", "/signals"]
NOT_FOUND_ORDER = frozenset({"order_not_found"})
NOT_FOUND_LIVE = frozenset({"live_account_not_found"})
NOT_FOUND_CONDITIONAL = frozenset({"conditional_not_found"})
PROBES: list[Probe] = [
    Probe(
        "DELETE",
        "/user/api-keys/{key_id}",
        lambda w: {"key_id": w.a_key_id},
        404,
        frozenset({"api_key_not_found"}),
    ),
    *[
        Probe(  # A's private portfolio has no public record, curve or positions
            "GET",
            "/portfolios/{code}/public" + rest,
            lambda w: {"code": w.a_code},
            404,
            frozenset({"portfolio_not_found"}),
        )
        for rest in ("", "/equity-curve", "/positions")
    ],
    Probe(
        "GET",
        "/portfolios/by_code/{code}",
        lambda w: {"code": w.a_code},
        404,
        frozenset({"portfolio_not_found"}),
    ),
    *on_a("GET", PORTFOLIO),
    *on_a("PATCH", PORTFOLIO, body=lambda w: {"name": "taken over", "visibility": "public"}),
    *on_a("DELETE", PORTFOLIO),
    *on_a("POST", PORTFOLIO + "/api-keys", body=lambda w: {"note": "stolen"}),
    *on_a("GET", PORTFOLIO + "/api-keys"),
    Probe(
        "DELETE",
        PORTFOLIO + "/api-keys/{key_id}",
        lambda w: {"portfolio_id": w.a_pid, "key_id": w.a_compat_id},
        404,
        frozenset({"portfolio_not_found"}),
    ),
    Probe(  # A's key id under B's own portfolio
        "DELETE",
        PORTFOLIO + "/api-keys/{key_id}",
        lambda w: {"portfolio_id": w.b_pid, "key_id": w.a_compat_id},
        404,
        frozenset({"api_key_not_found"}),
    ),
    *on_a("POST", PORTFOLIO + "/webhook-tokens"),
    *on_a("GET", PORTFOLIO + "/webhook-tokens"),
    Probe(
        "DELETE",
        PORTFOLIO + "/webhook-tokens/{token_id}",
        lambda w: {"portfolio_id": w.a_pid, "token_id": w.a_token_id},
        404,
        frozenset({"portfolio_not_found"}),
    ),
    Probe(
        "DELETE",
        PORTFOLIO + "/webhook-tokens/{token_id}",
        lambda w: {"portfolio_id": w.b_pid, "token_id": w.a_token_id},
        404,
        frozenset({"webhook_token_not_found"}),
    ),
    Probe(
        "POST",
        "/order",
        nothing,
        404,
        frozenset({"portfolio_not_found"}),
        body=market_order(lambda w: w.a_pid),
    ),
    Probe(
        "POST",
        "/order",
        nothing,
        404,
        frozenset({"portfolio_not_found"}),
        body=market_order(lambda w: w.a_pub_pid),
    ),
    Probe("POST", "/order", nothing, 201, body=b_order_with_a_client_id, once=True),
    *[
        Probe(  # what an order would do on A's portfolio: as unknown as the portfolio
            "POST",
            "/order/preview",
            nothing,
            404,
            frozenset({"portfolio_not_found"}),
            body=market_order(pid_of),
        )
        for pid_of in (lambda w: w.a_pid, lambda w: w.a_pub_pid)
    ],
    *[
        Probe(method, "/order/{order_id}", pick, 404, NOT_FOUND_ORDER)
        for method in ("GET", "DELETE")
        for pick in (
            lambda w: {"order_id": w.a_rest_id},
            lambda w: {"order_id": w.a_fill_id},  # filled: 404, never a revealing 409
            lambda w: {"order_id": w.a_pub_rest_id},
        )
    ],
    *on_a("GET", "/order", as_query=True),
    Probe(
        "GET",
        "/order",
        nothing,
        200,
        query=lambda w: {"portfolio_id": w.b_pid, "before_id": w.beyond_every_id},
    ),
    *[
        Probe(method, "/conditional-order/{conditional_id}", pick, 404, NOT_FOUND_CONDITIONAL)
        for method in ("GET", "DELETE")
        for pick in (lambda w: {"conditional_id": w.a_stop_id},)
    ],
    *on_a("POST", "/conditional-order", body=lambda w: conditional_on(w.a_pid)),
    *on_a("POST", "/conditional-order", body=lambda w: conditional_on(w.a_pub_pid)),
    *on_a("GET", "/conditional-order", as_query=True),
    *[
        Probe(
            "POST",
            PORTFOLIO + "/positions/{symbol}/tpsl",
            pick,
            404,
            frozenset({"portfolio_not_found"}),
            body=lambda w: {"stop_loss": "2000"},
        )
        for pick in (
            lambda w: {"portfolio_id": w.a_pid, "symbol": "ETHUSDT"},
            lambda w: {"portfolio_id": w.a_pub_pid, "symbol": "ETHUSDT"},
        )
    ],
    Probe(
        "GET",
        "/conditional-order",
        nothing,
        200,
        query=lambda w: {"portfolio_id": w.b_pid, "before_id": w.beyond_every_id},
    ),
    *on_a("GET", PORTFOLIO + "/positions"),
    *on_a("POST", PORTFOLIO + "/leverage", body=lambda w: {"symbol": "ETHUSDT", "leverage": 3}),
    *on_a(
        "PUT",
        PORTFOLIO + "/margin-type",
        body=lambda w: {"symbol": "ETHUSDT", "margin_type": "isolated"},
    ),
    *on_a(
        "POST",
        PORTFOLIO + "/positions/margin",
        body=lambda w: {"symbol": "ETHUSDT", "action": "reduce", "amount": "1"},
    ),
    *on_a("GET", PORTFOLIO + "/positions/margin-history"),
    *on_a("GET", PORTFOLIO + "/position-mode"),
    *on_a("PUT", PORTFOLIO + "/position-mode", body=lambda w: {"hedge": True}),
    *on_a("GET", PORTFOLIO + "/equity"),
    *on_a("GET", PORTFOLIO + "/ledger"),
    b_list_past_a(PORTFOLIO + "/ledger"),
    *on_a("GET", PORTFOLIO + "/fills"),
    b_list_past_a(PORTFOLIO + "/fills"),
    *on_a("GET", PORTFOLIO + "/equity-curve"),
    *on_a("POST", PORTFOLIO + "/top-up", body=lambda w: {"amount": "1000"}),
    *on_a("POST", PORTFOLIO + "/reset", body=lambda w: {"initial_balance": "1"}),
    *on_a("GET", PORTFOLIO + "/signals"),
    b_list_past_a(PORTFOLIO + "/signals"),
    *on_a("GET", PORTFOLIO + "/strategy-signals"),
    b_list_past_a(PORTFOLIO + "/strategy-signals"),
    *on_a("GET", PORTFOLIO + "/strategies"),
    Probe(
        "GET",
        PORTFOLIO + "/signals/{signal_id}",
        lambda w: {"portfolio_id": w.a_pid, "signal_id": w.a_signal_id},
        404,
        frozenset({"portfolio_not_found"}),
    ),
    Probe(  # A's signal id under B's own portfolio
        "GET",
        PORTFOLIO + "/signals/{signal_id}",
        lambda w: {"portfolio_id": w.b_pid, "signal_id": w.a_signal_id},
        404,
        frozenset({"signal_not_found"}),
    ),
    *[  # A's strategies: B changes neither, and sees only what a public one shows anyone
        Probe(method, STRATEGY + rest, pick, 404, NOT_FOUND_STRATEGY, body=body)
        for method, rest, body in STRATEGY_CALLS
        for pick in (a_strategy, a_public_strategy)
    ],
    *[Probe("GET", STRATEGY + rest, a_strategy, 404, NOT_FOUND_STRATEGY) for rest in PRIVATE_READS],
    Probe(
        "GET",
        "/strategies/by_code/{code}",
        lambda w: {"code": w.a_strategy_code},
        404,
        NOT_FOUND_STRATEGY,
    ),
    Probe(  # B's own strategy into A's portfolio
        "POST",
        STRATEGY + "/deployments",
        lambda w: {"strategy_id": w.b_strategy_id},
        404,
        frozenset({"portfolio_not_found"}),
        body=lambda w: {"portfolio_id": w.a_pid},
    ),
    Probe(  # A's backtest under B's own strategy
        "GET",
        STRATEGY + "/backtests/{backtest_id}",
        lambda w: {"strategy_id": w.b_strategy_id, "backtest_id": w.a_backtest_id},
        404,
        frozenset({"backtest_not_found"}),
    ),
    Probe(  # A's deployment's drift report under B's own strategy
        "POST",
        STRATEGY + "/deployments/{deployment_id}/drift",
        lambda w: {"strategy_id": w.b_strategy_id, "deployment_id": w.a_deployment_id},
        404,
        frozenset({"deployment_not_found"}),
    ),
    Probe(  # A's deployment under B's own strategy
        "POST",
        STRATEGY + "/deployments/{deployment_id}/{command}",
        lambda w: {
            "strategy_id": w.b_strategy_id,
            "deployment_id": w.a_deployment_id,
            "command": "stop",
        },
        404,
        frozenset({"deployment_not_found"}),
    ),
    *[
        Probe(
            method,
            template,
            lambda w: {"notification_id": w.a_notification_id},
            404,
            frozenset({"notification_not_found"}),
        )
        for method, template in (
            ("POST", "/inbox/{notification_id}/read"),
            ("DELETE", "/inbox/{notification_id}"),
        )
    ],
    Probe("GET", "/inbox", nothing, 200, query=lambda w: {"before_id": w.beyond_every_id}),
    Probe("GET", "/tg/messages", nothing, 200, query=lambda w: {"before_id": w.beyond_every_id}),
    Probe(
        "GET",
        "/user/email/messages",
        nothing,
        200,
        query=lambda w: {"before_id": w.beyond_every_id},
    ),
    *[
        Probe(
            method,
            "/tg/channels/{chat_id}",
            lambda w: {"chat_id": w.a_channel_id},
            404,
            frozenset({"telegram_channel_not_found"}),
            body=body,
        )
        for method, body in (
            ("PUT", lambda w: {"portfolio_id": None}),
            ("DELETE", None),
        )
    ],
    Probe(
        "PUT",
        "/webhook-sources/{source_id}/signal",
        lambda w: {"source_id": w.a_source_id},
        404,
        frozenset({"webhook_source_not_found"}),
        body=lambda w: {"portfolio_id": None},
    ),
    *[
        Probe(
            method,
            template,
            lambda w: {"source_id": w.a_source_id},
            404,
            frozenset({"webhook_source_not_found"}),
        )
        for method, template in (
            ("DELETE", "/webhook-sources/{source_id}"),
            ("GET", "/webhook-sources/{source_id}/events"),
        )
    ],
    # Mailed tokens name A's account, but only A holds them: B's guesses are refused alike and
    # change nothing of A's.
    *[
        Probe(
            method,
            path,
            nothing,
            400,
            frozenset({"invalid_token"}),
            query=query,
            body=body,
        )
        for method, path, query, body in (
            ("GET", "/auth/email/verify", lambda w: {"token": "guess"}, None),
            ("POST", "/auth/email/verify", nothing, lambda w: {"token": "guess"}),
            (
                "POST",
                "/auth/password/reset",
                nothing,
                lambda w: {"token": "guess", "password": "violet-harbor-kettle-42"},
            ),
            ("GET", "/email/unsubscribe", lambda w: {"token": f"{w.a.id}.all.{'0' * 32}"}, None),
            ("POST", "/email/unsubscribe", lambda w: {"token": f"{w.a.id}.fill.{'0' * 32}"}, None),
        )
    ],
    Probe(  # B cannot post alerts into A's source without its secret
        "POST",
        "/webhook/finnhub/{source_id}",
        lambda w: {"source_id": w.a_source_id},
        401,
        frozenset({"invalid_signature"}),
        body=lambda w: {"id": "walk", "symbol": "BTCUSDT"},
    ),
    Probe(
        "PUT",
        "/tg/signals",
        nothing,
        404,
        frozenset({"portfolio_not_found"}),
        body=lambda w: {"portfolio_id": w.a_pid},
    ),
    Probe(
        "PUT",
        "/tg/signals",
        nothing,
        404,
        frozenset({"portfolio_not_found"}),
        body=lambda w: {"portfolio_id": w.a_pub_pid},
    ),
    *[
        Probe(
            method,
            template,
            lambda w: {"order_id": w.a_recharge_id},
            404,
            frozenset({"recharge_not_found"}),
        )
        for method, template in (
            ("GET", "/recharge/orders/{order_id}"),
            ("GET", "/recharge/orders/{order_id}/qr.svg"),
            ("POST", "/recharge/orders/{order_id}/cancel"),
        )
    ],
    *[
        Probe(
            method,
            template,
            lambda w: {"feedback_id": w.a_feedback_id},
            404,
            frozenset({"feedback_not_found"}),
        )
        for method, template in (
            ("GET", "/feedback/{feedback_id}"),
            ("GET", "/feedback/{feedback_id}/screenshot"),
            ("PUT", "/feedback/{feedback_id}/screenshot"),
        )
    ],
    Probe("GET", "/feedback", nothing, 200, query=lambda w: {"before_id": w.beyond_every_id}),
    Probe("GET", "/launch/invitations", nothing, 200),  # B's own codes only (A's: a_strings)
    Probe(  # A's webhook token is no waitlist link
        "POST",
        "/launch/waitlist/verify",
        nothing,
        404,
        frozenset({"waitlist_not_found"}),
        body=lambda w: {"token": w.a_token},
    ),
    Probe(  # nor is it one as the e-mailed link
        "GET",
        "/launch/waitlist/verify",
        nothing,
        404,
        frozenset({"waitlist_not_found"}),
        query=lambda w: {"token": w.a_token},
    ),
    Probe(
        "GET", "/recharge/orders", nothing, 200, query=lambda w: {"before_id": w.beyond_every_id}
    ),
    Probe(
        "GET", "/user/wallet/ledger", nothing, 200, query=lambda w: {"before_id": w.beyond_every_id}
    ),
    Probe(
        "POST",
        "/user/wallet/transfers",
        nothing,
        404,
        frozenset({"portfolio_not_found"}),
        body=lambda w: {"direction": "to_portfolio", "portfolio_id": w.a_pub_pid, "amount": "1"},
    ),
    Probe(  # out of any portfolio is refused before the portfolio is looked at (issue 30)
        "POST",
        "/user/wallet/transfers",
        nothing,
        400,
        frozenset({"portfolio_money_is_paper"}),
        body=lambda w: {"direction": "from_portfolio", "portfolio_id": w.a_pid, "amount": "1"},
    ),
    *[
        Probe(method, "/live/accounts/{account_id}" + rest, pick, 404, NOT_FOUND_LIVE, body=body)
        for method, rest, body in (
            ("GET", "", None),
            ("PATCH", "", lambda w: {"label": "taken over"}),
            ("DELETE", "", None),
            ("POST", "/rotate", lambda w: {"api_key": "k", "api_secret": "s"}),
            ("GET", "/orders", None),
            ("POST", "/kill", lambda w: {"close_positions": True}),
            ("GET", "/reconciliations", None),
            ("POST", "/reconcile", None),
        )
        for pick in (lambda w: {"account_id": w.a_live_id},)
    ],
    Probe(  # B binds A's portfolio as a signal source: refused before any exchange call
        "POST",
        "/live/accounts",
        nothing,
        404,
        frozenset({"portfolio_not_found"}),
        body=lambda w: {
            "label": "x",
            "api_key": "k",
            "api_secret": "s",
            "source_portfolio_id": w.a_pid,
        },
    ),
    *[  # a private portfolio's chain is its owner's only
        Probe(
            "GET", "/chain/portfolios/{code}" + rest, pick, 404, frozenset({"portfolio_not_found"})
        )
        for rest, pick in (
            ("", lambda w: {"code": w.a_code}),
            ("/events", lambda w: {"code": w.a_code}),
            ("/events/{seq}/proof", lambda w: {"code": w.a_code, "seq": 1}),
            (
                "/fills/{fill_id}/proof",
                lambda w: {"code": w.a_code, "fill_id": min(w.a_fill_row_ids)},
            ),
        )
    ],
]
PROBES += [  # copy trading (docs/social.md)
    *[
        Probe(
            method,
            template,
            lambda w: {"relation_id": w.a_relation_id},
            404,
            frozenset({"copy_not_found"}),
            body=body,
        )
        for method, template, body in (
            ("GET", "/copy/relations/{relation_id}", None),
            ("GET", "/copy/relations/{relation_id}/trades", None),
            ("POST", "/copy/relations/{relation_id}/pause", None),
            ("POST", "/copy/relations/{relation_id}/resume", None),
            ("POST", "/copy/relations/{relation_id}/unfollow", lambda w: {"close_positions": True}),
        )
    ],
    Probe(
        "GET", "/copy/settlements", nothing, 200, query=lambda w: {"before_id": w.beyond_every_id}
    ),
    *on_a("PUT", "/copy/leaders/{portfolio_id}", body=lambda w: {"profit_share_pct": 30}),
    *on_a("GET", "/copy/leaders/{portfolio_id}/terms"),  # where A's shares go: A's to read
    Probe(  # B's own portfolio paying its profit shares into A's
        "PUT",
        "/copy/leaders/{portfolio_id}",
        lambda w: {"portfolio_id": w.b_pid},
        404,
        frozenset({"portfolio_not_found"}),
        body=lambda w: {"payout_portfolio_id": w.a_pid},
    ),
    Probe(  # a private portfolio is no leader
        "GET",
        "/copy/leaders/{portfolio_id}",
        lambda w: {"portfolio_id": w.a_pid},
        404,
        frozenset({"portfolio_not_found"}),
    ),
    *[
        Probe(
            "POST",
            "/copy/relations",
            nothing,
            404,
            frozenset({"portfolio_not_found"}),
            body=body,
        )
        for body in (
            lambda w: {  # copies into A's portfolio
                "leader_portfolio_id": w.a_pub_pid,
                "portfolio_id": w.a_pid,
                "mode": "fixed_ratio",
                "allocation": 100,
            },
            lambda w: {  # copies A's private portfolio
                "leader_portfolio_id": w.a_pid,
                "portfolio_id": w.b_pid,
                "mode": "fixed_ratio",
                "allocation": 100,
            },
        )
    ],
]
PROBES += [  # subscriptions (docs/subscriptions.md)
    Probe(
        "PATCH",
        "/subscriptions/{subscription_id}",
        lambda w: {"subscription_id": w.a_subscription_id},
        404,
        frozenset({"subscription_not_found"}),
        body=lambda w: {"channels": ["email"]},
    ),
    Probe(
        "POST",
        "/subscriptions/{subscription_id}/cancel",
        lambda w: {"subscription_id": w.a_subscription_id},
        404,
        frozenset({"subscription_not_found"}),
    ),
    *on_a("GET", PORTFOLIO + "/subscribers"),
    *on_a("PUT", PORTFOLIO + "/subscription-price", body=lambda w: {"price": 1}),
    Probe(  # counts are public for public portfolios only
        "GET",
        PORTFOLIO + "/subscriber-counts",
        lambda w: {"portfolio_id": w.a_pid},
        404,
        frozenset({"portfolio_not_found"}),
    ),
    Probe(  # A's private portfolio cannot be subscribed to
        "POST",
        "/subscribe",
        nothing,
        404,
        frozenset({"portfolio_not_found"}),
        body=lambda w: {"portfolio_id": w.a_pid},
    ),
]
PROBES += [  # comments (docs/comments.md): A's comment on A's private portfolio
    *[
        Probe(
            method,
            "/comments/{comment_id}",
            lambda w: {"comment_id": w.a_comment_id},
            404,
            frozenset({"comment_not_found"}),
            body=body,
        )
        for method, body in (("PATCH", lambda w: {"text": "B was here"}), ("DELETE", None))
    ],
    Probe(
        "GET",
        "/comments",
        nothing,
        404,
        frozenset({"portfolio_not_found"}),
        query=lambda w: {"portfolio_id": w.a_pid},
    ),
    *[
        Probe("POST", "/comments", nothing, 404, frozenset({error}), body=body)
        for error, body in (
            ("portfolio_not_found", lambda w: {"portfolio_id": w.a_pid, "text": "hi"}),
            (  # a reply under B's own portfolio to A's hidden comment
                "comment_not_found",
                lambda w: {"portfolio_id": w.b_pid, "text": "hi", "parent_id": w.a_comment_id},
            ),
        )
    ],
]
PROBES += [  # comments on strategies: A's comment on A's private strategy
    *[
        Probe(
            method,
            "/comments/{comment_id}",
            lambda w: {"comment_id": w.a_strategy_comment_id},
            404,
            frozenset({"comment_not_found"}),
            body=body,
        )
        for method, body in (("PATCH", lambda w: {"text": "B was here"}), ("DELETE", None))
    ],
    Probe(
        "GET",
        "/comments",
        nothing,
        404,
        frozenset({"strategy_not_found"}),
        query=lambda w: {"strategy_id": w.a_strategy_id},
    ),
    *[
        Probe("POST", "/comments", nothing, 404, frozenset({error}), body=body)
        for error, body in (
            ("strategy_not_found", lambda w: {"strategy_id": w.a_strategy_id, "text": "hi"}),
            (  # a reply under B's own strategy to A's hidden comment
                "comment_not_found",
                lambda w: {
                    "strategy_id": w.b_strategy_id,
                    "text": "hi",
                    "parent_id": w.a_strategy_comment_id,
                },
            ),
        )
    ],
]
WEBHOOK = "/webhook/tv/{token}"  # under the native prefixes, and at the root


@dataclass
class Coverage:
    """Which routes of the app the walk actually called."""

    keys: set[RouteKey] = field(default_factory=set)
    calls: int = 0

    def add(self, key: RouteKey) -> None:
        self.keys.add(key)
        self.calls += 1


def session_only_routes(app: FastAPI) -> set[RouteKey]:
    return {info.key for info in routes(app) if session_only in info.dependency_calls}


async def walk_native(app: FastAPI, w: World, cov: Coverage, prefixes: list[str]) -> None:
    session_routes = session_only_routes(app)
    async with client_for(app, headers=bearer(w.b_key)) as key_client:
        done_once: set[int] = set()
        for prefix in prefixes:
            for caller in native_callers(w, key_client):
                for index, probe in enumerate(PROBES):
                    if probe.once and index in done_once:
                        continue
                    done_once.add(index)
                    key = RouteKey(probe.method, prefix + probe.template)
                    url = prefix + probe.template.format(**probe.path(w))
                    kwargs: dict[str, Any] = {"params": probe.query(w)}
                    if probe.body is not None:
                        kwargs["json"] = probe.body(w)
                    response = await caller.send(probe.method, url, **kwargs)
                    what = (caller.name, probe.method, url, kwargs)
                    cov.add(key)
                    assert response.status_code < 500, (what, response.text)
                    assert_no_leak(response, w, what)
                    if key in session_routes and not caller.uses_session:
                        assert_native_error(response, 403, {"session_required"}, what)
                    elif probe.status >= 400:
                        assert_native_error(response, probe.status, set(probe.errors), what)
                    else:
                        assert response.status_code == probe.status, (what, response.text)


async def walk_webhooks(app: FastAPI, w: World, cov: Coverage, prefixes: list[str]) -> None:
    """The token is the credential: A's token id or prefix is no token; B's token reaches only
    B's portfolio whatever the body names."""
    async with client_for(app) as sender:
        for prefix in [*prefixes, ""]:
            key = RouteKey("POST", prefix + WEBHOOK)
            for guess in (str(w.a_token_id), w.a_token[:10], w.a_token[:-1]):
                response = await sender.post(
                    f"{prefix}/webhook/tv/{guess}",
                    content=b"buy ETHUSDT 0.1",
                    headers={"Content-Type": "text/plain"},
                )
                assert_native_error(response, 404, {"webhook_not_found"}, (prefix, guess))
                cov.add(key)
            redirected = {
                "symbol": "BTCUSDT",
                "action": "buy",
                "qty": "0.01",
                "order_type": "limit",
                "price": "30000",
                "portfolio_id": w.a_pid,
                "portfolio": w.a_code,
                "idempotency_key": f"walk-{prefix or 'root'}-{w.tag}",
            }
            response = await sender.post(f"{prefix}/webhook/tv/{w.b_token}", json=redirected)
            assert response.status_code < 500, response.text
            assert_no_leak(response, w, ("B's webhook naming A's portfolio", prefix))
            if response.status_code == 200:
                for placed in response.json()["orders"]:
                    mine = await w.b.get(f"/v1/order/{placed['id']}")
                    assert mine.status_code == 200 and mine.json()["portfolio_id"] == w.b_pid
            else:
                assert set(response.json()) == {"error", "msg"}, response.text
            cov.add(key)


async def walk_websocket(live_url: str, w: World, cov: Coverage, paths: list[str]) -> None:
    """Portfolio channels of A's are refused; "all of mine" means B's only."""
    session_cookie = w.b.client.cookies.get("pt_session")
    assert session_cookie
    credentials = {
        "api key": {"Authorization": f"Bearer {w.b_key}"},
        "session": {"Cookie": f"pt_session={session_cookie}", "Origin": ORIGIN},
    }
    for path in paths:
        for name, headers in credentials.items():
            async with connect(
                ws_url(live_url, path), additional_headers=headers, max_queue=None
            ) as conn:
                sock = Socket(conn)
                welcome = await sock.recv()
                assert welcome["authenticated"] is True and welcome["user_id"] == w.b.id, welcome
                request_id = 0
                for kind in ("orders", "positions", "balance", "signals"):
                    for pid in sorted(w.a_pids):
                        request_id += 1
                        reply = await sock.subscribe(f"{kind}:{pid}", request_id=request_id)
                        what = (name, path, kind, pid, reply)
                        assert reply["type"] == "error", what
                        assert reply["error"] == "portfolio_not_found", what
                request_id += 1
                mine = await sock.subscribe("orders", "balance", request_id=request_id)
                assert mine["type"] == "subscribed", mine
                assert sorted(mine["channels"]) == [f"balance:{w.b_pid}", f"orders:{w.b_pid}"]
            cov.add(RouteKey("WS", path))


async def walk_binance_streams(
    app: FastAPI, live_url: str, w: World, cov: Coverage, paths: list[str]
) -> None:
    """Binance's streams (docs/fapi-ws.md): a listenKey is the credential, made by a key pair.
    A guess next to A's real key opens no private stream and carries nothing of A's, whatever
    the connect form; B's key pair cannot keep A's key alive or delete it."""
    async with client_for(app) as client:
        made = await client.post("/fapi/v1/listenKey", headers={"X-MBX-APIKEY": w.a_compat_key})
        assert made.status_code == 200, made.text
        real = made.json()["listenKey"]
        guess = real[:-1] + ("A" if real[-1] != "A" else "B")
        for method in ("PUT", "DELETE"):
            other = await client.request(
                method,
                "/fapi/v1/listenKey",
                params={"listenKey": real},
                headers={"X-MBX-APIKEY": w.b_compat_key},
            )
            assert other.status_code == 400 and other.json()["code"] == -1125, other.text
    for path in paths:
        if "/private/" in path:
            url = path.replace("/{rest:path}", "") + f"?listenKey={guess}"
        elif path.endswith("{rest:path}"):
            url = path.replace("{rest:path}", guess)
        elif path.endswith("/stream"):
            url = f"{path}?streams={guess}"
        else:
            url = path
        async with connect(ws_url(live_url, url), max_queue=None) as conn:
            if path.endswith("/ws") and "/private/" not in path:
                await conn.send(f'{{"method":"SUBSCRIBE","params":["{guess}"],"id":1}}')
            received: list[str] = []
            with contextlib.suppress(TimeoutError, ConnectionClosed):
                async with asyncio.timeout(0.5):
                    async for message in conn:
                        received.append(str(message))
            for message in received:
                for marker in (w.tag, A_BALANCE, w.a_code):
                    assert marker not in message, (path, message)
            if "/private/" in path:
                assert conn.close_code == 1008, (path, conn.close_code, received)
        cov.add(RouteKey("WS", path))


def ws_api_signed(key: str, secret: str, params: dict[str, Any]) -> dict[str, Any]:
    """A WebSocket API request's params, signed as ccxt signs them (sorted, `k=v&…`)."""
    values = {**params, "apiKey": key, "timestamp": int(time.time() * 1000)}
    payload = "&".join(f"{k}={v}" for k, v in sorted(values.items()))
    digest = hmac.new(secret.encode(), payload.encode(), hashlib.sha256).hexdigest()
    return {**values, "signature": digest}


async def walk_ws_api(live_url: str, w: World, cov: Coverage, paths: list[str]) -> None:
    """Binance's WebSocket API (docs/fapi-ws.md): B's key pair, frame by frame, with A's order
    ids, is refused as over REST, and B's own account shows nothing of A's."""
    cases: list[tuple[str, Values, int | None]] = [
        *[("order.status", probe, -2013) for probe in A_ORDERS],
        *[("order.cancel", probe, -2011) for probe in A_ORDERS],
        ("algoOrder.cancel", A_STOP, -2011),
        ("v2/account.status", nothing, None),
        ("openOrders.status", nothing, None),
    ]
    for path in paths:
        async with connect(ws_url(live_url, path)) as conn:
            for n, (method, params, code) in enumerate(cases):
                signed = ws_api_signed(w.b_compat_key, w.b_compat_secret, params(w))
                frame = orjson.dumps({"id": n, "method": method, "params": signed}).decode()
                await conn.send(frame)
                answer = orjson.loads(await asyncio.wait_for(conn.recv(), 30))
                what = (path, method, signed)
                assert not leaks(answer, w, frame), (what, leaks(answer, w, frame), answer)
                if code is None:
                    assert answer["status"] == 200, (what, answer)
                else:
                    assert answer["error"]["code"] == code, (what, answer)
        cov.add(RouteKey("WS", path))


async def walk_web_pages(w: World, cov: Coverage) -> None:
    for pid in sorted(w.a_pids):
        page = await w.b.get(f"/app/portfolios/{pid}")
        assert page.status_code == 404, page.status_code
        assert_no_leak(page, w, ("portfolio page", pid))
    cov.add(RouteKey("GET", "/app/portfolios/{portfolio_id}"))
    page = await w.b.get(f"/p/{w.a_code}")  # a shell; the data comes from the public API
    assert page.status_code < 500
    assert_no_leak(page, w, ("public page", w.a_code))
    cov.add(RouteKey("GET", "/p/{code}"))
    page = await w.b.get(f"/p/{w.a_code}/track-record")  # a private portfolio: none
    assert page.status_code == 404, page.status_code
    assert_no_leak(page, w, ("track-record page", w.a_code))
    cov.add(RouteKey("GET", "/p/{code}/track-record"))
    page = await w.b.get(f"/app/strategies/{w.a_strategy_id}")  # the editor: its owner's only
    assert page.status_code == 404, page.status_code
    assert_no_leak(page, w, ("strategy page", w.a_strategy_id))
    cov.add(RouteKey("GET", "/app/strategies/{strategy_id}"))
    page = await w.b.get(f"/s/{w.a_strategy_code}")  # a shell; by_code refuses a private one
    assert page.status_code < 500
    assert_no_leak(page, w, ("public strategy page", w.a_strategy_code))
    cov.add(RouteKey("GET", "/s/{code}"))


# -- /fapi ----------------------------------------------------------------------------------------


def sign(secret: str, params: dict[str, Any]) -> str:
    items = {**params, "timestamp": int(time.time() * 1000), "recvWindow": 10_000}
    encoded = urlencode(items)
    digest = hmac.new(secret.encode(), encoded.encode(), hashlib.sha256).hexdigest()
    return f"{encoded}&signature={digest}"


@dataclass(frozen=True)
class FapiProbe:
    params: Values
    status: int = 200
    code: int | None = None  # the Binance code of a refusal
    once: bool = False
    item_code: int | None = None  # a batch: the code every item of the answer is refused with

    def check(self, response: httpx.Response, w: World, what: object) -> None:
        assert_no_leak(response, w, what)
        if self.code is not None:
            assert_binance_error(response, self.status, self.code, what)
        else:
            assert response.status_code == self.status, (what, response.text[:500])
        if self.item_code is not None:
            items = response.json()
            assert items and all(i.get("code") == self.item_code for i in items), (what, items)


def by_id(symbol: str, pick: Callable[[World], Any], name: str = "orderId") -> Values:
    return lambda w: {"symbol": symbol, name: pick(w)}


A_ORDERS: list[Values] = [
    by_id("BTCUSDT", lambda w: w.a_rest_id),
    by_id("ETHUSDT", lambda w: w.a_fill_id),
    by_id("BTCUSDT", lambda w: w.a_pub_rest_id),
    by_id("BTCUSDT", lambda w: w.a_rest_cid, "origClientOrderId"),
    by_id("ETHUSDT", lambda w: w.a_stop_id),  # a conditional order: same id sequence
]
A_STOP: Values = by_id("ETHUSDT", lambda w: w.a_stop_id, "algoId")
BTC: Values = lambda w: {"symbol": "BTCUSDT"}  # noqa: E731
FAPI_PROBES: dict[tuple[str, str], list[FapiProbe]] = {
    ("GET", "/v1/order"): [FapiProbe(p, 400, -2013) for p in A_ORDERS],
    ("GET", "/v1/openOrder"): [FapiProbe(p, 400, -2013) for p in A_ORDERS],
    ("DELETE", "/v1/order"): [FapiProbe(p, 400, -2011) for p in A_ORDERS],
    ("POST", "/v1/order"): [
        FapiProbe(  # A's client order id in B's own portfolio: B's new order, no -4116
            lambda w: {
                "symbol": "BTCUSDT",
                "side": "BUY",
                "type": "LIMIT",
                "quantity": "0.01",
                "price": "30000",
                "timeInForce": "GTC",
                "newClientOrderId": w.a_pub_cid,
            },
            once=True,
        )
    ],
    ("POST", "/v1/batchOrders"): [
        FapiProbe(  # A's client order id in B's batch: B's order (or B's own -4116), never A's
            lambda w: {
                "batchOrders": orjson.dumps(
                    [
                        {
                            "symbol": "BTCUSDT",
                            "side": "BUY",
                            "type": "LIMIT",
                            "quantity": "0.01",
                            "price": "30000",
                            "timeInForce": "GTC",
                            "newClientOrderId": w.a_fill_cid,
                        }
                    ]
                ).decode()
            },
            once=True,
        )
    ],
    ("DELETE", "/v1/batchOrders"): [
        FapiProbe(
            lambda w: {
                "symbol": "BTCUSDT",
                "orderIdList": orjson.dumps([w.a_rest_id, w.a_pub_rest_id]).decode(),
            },
            item_code=-2011,
        ),
        FapiProbe(
            lambda w: {
                "symbol": "BTCUSDT",
                "origClientOrderIdList": orjson.dumps([w.a_rest_cid]).decode(),
            },
            item_code=-2011,
        ),
    ],
    ("GET", "/v1/openOrders"): [FapiProbe(nothing), FapiProbe(BTC)],
    ("DELETE", "/v1/allOpenOrders"): [FapiProbe(BTC)],  # B's own; A's resting order stays
    ("GET", "/v1/allOrders"): [
        FapiProbe(BTC),
        FapiProbe(lambda w: {"symbol": "BTCUSDT", "orderId": 1}),
        FapiProbe(lambda w: {"symbol": "BTCUSDT", "startTime": 0}),
    ],
    ("GET", "/v1/userTrades"): [
        FapiProbe(lambda w: {"symbol": "ETHUSDT", "orderId": w.a_fill_id}),
        FapiProbe(lambda w: {"symbol": "ETHUSDT", "fromId": 1}),
        FapiProbe(lambda w: {"symbol": "ETHUSDT", "startTime": 0}),
    ],
    ("GET", "/v1/income"): [FapiProbe(nothing), FapiProbe(lambda w: {"startTime": 0})],
    ("GET", "/v1/forceOrders"): [FapiProbe(nothing), FapiProbe(lambda w: {"startTime": 0})],
    ("POST", "/v1/leverage"): [FapiProbe(lambda w: {"symbol": "ETHUSDT", "leverage": 7})],
    ("GET", "/v2/account"): [FapiProbe(nothing)],
    ("GET", "/v3/account"): [FapiProbe(nothing)],
    ("GET", "/v2/balance"): [FapiProbe(nothing)],
    ("GET", "/v3/balance"): [FapiProbe(nothing)],
    ("GET", "/v2/positionRisk"): [FapiProbe(nothing), FapiProbe(lambda w: {"symbol": "ETHUSDT"})],
    ("GET", "/v3/positionRisk"): [FapiProbe(nothing)],
    ("GET", "/v1/symbolConfig"): [FapiProbe(lambda w: {"symbol": "ETHUSDT"})],
    ("GET", "/v1/accountConfig"): [FapiProbe(nothing)],
    ("GET", "/v1/commissionRate"): [FapiProbe(BTC)],
    ("GET", "/v1/leverageBracket"): [FapiProbe(BTC)],
    ("GET", "/v1/positionSide/dual"): [FapiProbe(nothing)],
    ("POST", "/v1/positionSide/dual"): [
        FapiProbe(lambda w: {"dualSidePosition": "false"}, 400, -4059)
    ],
    ("GET", "/v1/multiAssetsMargin"): [FapiProbe(nothing)],
    ("POST", "/v1/multiAssetsMargin"): [
        FapiProbe(lambda w: {"multiAssetsMargin": "false"}, 400, -4171)
    ],
    ("POST", "/v1/marginType"): [
        FapiProbe(lambda w: {"symbol": "BTCUSDT", "marginType": "CROSSED"}, 400, -4046)
    ],
    ("POST", "/v1/positionMargin"): [  # B has no isolated position of its own
        FapiProbe(lambda w: {"symbol": "ETHUSDT", "amount": "1", "type": "2"}, 400, -4049)
    ],
    ("GET", "/v1/positionMargin/history"): [FapiProbe(lambda w: {"symbol": "ETHUSDT"})],
    ("GET", "/v1/algoOrder"): [FapiProbe(A_STOP, 400, -2013)],
    ("DELETE", "/v1/algoOrder"): [FapiProbe(A_STOP, 400, -2011)],
    ("POST", "/v1/algoOrder"): [
        FapiProbe(  # B's own stop
            lambda w: {
                "algoType": "CONDITIONAL",
                "symbol": "ETHUSDT",
                "side": "SELL",
                "type": "STOP_MARKET",
                "triggerPrice": "2000",
                "quantity": "0.1",
            },
            once=True,
        )
    ],
    ("GET", "/v1/openAlgoOrders"): [FapiProbe(nothing), FapiProbe(BTC)],
    ("DELETE", "/v1/algoOpenOrders"): [FapiProbe(lambda w: {"symbol": "ETHUSDT"})],
    ("GET", "/v1/allAlgoOrders"): [
        FapiProbe(lambda w: {"symbol": "ETHUSDT"}),
        FapiProbe(lambda w: {"symbol": "ETHUSDT", "algoId": 1}),
    ],
}


def signed_endpoints() -> set[tuple[str, str]]:
    return {(m, spec.path) for spec in REGISTRY if spec.signed for m in spec.methods}


async def walk_fapi(app: FastAPI, w: World, cov: Coverage, mounts: list[str]) -> None:
    """B's compat key on every signed endpoint, with A's order ids and client ids."""
    async with client_for(app, headers={"X-MBX-APIKEY": w.b_compat_key}) as bot:
        done_once: set[tuple[str, str, int]] = set()
        for mount in mounts:
            prefix = mount.removesuffix("/{rest:path}")
            for (method, path), probes in FAPI_PROBES.items():
                for index, probe in enumerate(probes):
                    if probe.once and (method, path, index) in done_once:
                        continue
                    done_once.add((method, path, index))
                    signed = sign(w.b_compat_secret, probe.params(w))
                    if method == "GET":
                        response = await bot.get(f"{prefix}{path}?{signed}")
                    else:
                        response = await bot.request(
                            method,
                            f"{prefix}{path}",
                            content=signed.encode(),
                            headers={"Content-Type": "application/x-www-form-urlencoded"},
                        )
                    probe.check(response, w, (method, prefix + path, signed))
                    cov.add(RouteKey("ANY", mount))


async def walk_foreign(app: FastAPI, w: World, cov: Coverage, mounts: list[str]) -> None:
    """Other Binance products answer "not supported", even to a signed call with A's ids."""
    async with client_for(app, headers={"X-MBX-APIKEY": w.b_compat_key}) as bot:
        for mount in mounts:
            prefix = mount.removesuffix("/{rest:path}")
            for method in ("GET", "DELETE"):
                signed = sign(w.b_compat_secret, {"symbol": "BTCUSDT", "orderId": w.a_rest_id})
                response = await bot.request(method, f"{prefix}/v1/order?{signed}")
                assert_no_leak(response, w, (method, prefix))
                assert_binance_error(response, 400, -1020, (method, prefix))
            cov.add(RouteKey("ANY", mount))


# -- the tests ------------------------------------------------------------------------------------


def classify(app: FastAPI) -> tuple[list[str], list[str], list[str], list[str], list[str]]:
    """The app's native prefixes, WebSocket paths, /fapi mounts and foreign mounts."""
    settings = app.state.ctx.settings
    native = ["/v1", settings.legacy_prefix]
    keys = [info.key for info in routes(app)]
    ws = [k.path for k in keys if k.method == "WS"]
    catch_alls = [k.path for k in keys if k.method == "ANY"]
    fapi = [p for p in catch_alls if p.endswith("fapi/{rest:path}")]
    foreign = [p for p in catch_alls if p not in fapi]
    return native, ws, fapi, foreign, [settings.legacy_prefix]


def planned_coverage(app: FastAPI) -> set[RouteKey]:
    """The routes the walk calls, from its tables alone (no request made)."""
    native, ws, fapi, foreign, _ = classify(app)
    planned = {RouteKey(p.method, prefix + p.template) for prefix in native for p in PROBES}
    planned |= {RouteKey("POST", prefix + WEBHOOK) for prefix in [*native, ""]}
    planned |= {RouteKey("WS", path) for path in ws}
    planned |= {RouteKey("ANY", mount) for mount in fapi + foreign}
    planned |= {
        RouteKey("GET", path)
        for path in (
            "/app/portfolios/{portfolio_id}",
            "/p/{code}",
            "/p/{code}/track-record",
            "/app/strategies/{strategy_id}",
            "/s/{code}",
        )
    }
    return planned


def object_routes(app: FastAPI) -> set[RouteKey]:
    """A page's HEAD is its GET without the body (web/routes.py PAGE_METHODS): one route."""
    infos: list[RouteInfo] = routes(app)
    return {_as_get(info.key) for info in infos if info.names_an_object}


def _as_get(key: RouteKey) -> RouteKey:
    return RouteKey("GET", key.path) if key.method == "HEAD" else key


async def test_the_walk_covers_every_route_that_names_an_object(app: FastAPI) -> None:
    """A new route with an id in its path, a …_id field, or a new signed /fapi endpoint must be
    added to the walk (or, if it names nothing anyone owns, to NOT_OWNED with the reason)."""
    needed = object_routes(app) - set(NOT_OWNED)
    planned = planned_coverage(app)
    assert sorted(map(str, needed - planned)) == [], "routes the authorization walk misses"
    every = {_as_get(info.key) for info in routes(app)}
    assert sorted(map(str, planned - every)) == [], "probes of routes the app no longer has"
    assert sorted(map(str, set(NOT_OWNED) - every)) == [], "NOT_OWNED names unknown routes"
    assert signed_endpoints() == set(FAPI_PROBES), "signed /fapi endpoints and FAPI_PROBES differ"
    assert len(needed) >= 60  # /v1 and its legacy twin, webhooks, WebSocket, /fapi, pages


async def test_another_users_objects_are_refused_everywhere(
    app: FastAPI, user_factory: Callable[..., Awaitable[User]], live_url: str
) -> None:
    a = await user_factory()
    b = await user_factory()
    w = await build_world(app, a, b)
    before = await snapshot(w)
    native, ws, fapi, foreign, _ = classify(app)
    cov = Coverage()

    await walk_native(app, w, cov, native)
    await walk_webhooks(app, w, cov, native)
    native_ws = [path for path in ws if path in {prefix + "/ws" for prefix in native}]
    await walk_websocket(live_url, w, cov, native_ws)
    ws_api = [path for path in ws if path.endswith("/ws-fapi/v1")]
    streams = [path for path in ws if path not in native_ws and path not in ws_api]
    await walk_binance_streams(app, live_url, w, cov, streams)
    await walk_ws_api(live_url, w, cov, ws_api)
    await walk_web_pages(w, cov)
    await walk_fapi(app, w, cov, fapi)
    await walk_foreign(app, w, cov, foreign)

    assert await snapshot(w) == before  # nothing of A's changed
    assert cov.keys == planned_coverage(app)
    assert cov.calls > 250
    # A's credentials all still work, and A's resting orders still rest.
    async with client_for(app, headers=bearer(w.a_key)) as by_key:
        mine = await by_key.get("/v1/portfolios/my")
        assert mine.status_code == 200 and {p["id"] for p in mine.json()} >= w.a_pids
    async with client_for(app, headers={"X-MBX-APIKEY": w.a_compat_key}) as a_bot:
        response = await a_bot.get(f"/fapi/v1/openOrders?{sign(w.a_compat_secret, {})}")
        assert response.status_code == 200, response.text
        assert {o["orderId"] for o in response.json()} == {w.a_rest_id}
    async with client_for(app) as sender:
        alert = await sender.post(
            f"/webhook/tv/{w.a_token}",
            content=b"close SOLUSDT",
            headers={"Content-Type": "text/plain"},
        )
        assert alert.status_code == 200, alert.text


async def test_the_leak_detector_sees_a_s_data_when_a_reads_it(
    app: FastAPI, user_factory: Callable[..., Awaitable[User]]
) -> None:
    """The walk's "nothing of A's shows" check is not vacuous: on A's own reads it fires."""
    w = await build_world(app, await user_factory(), await user_factory())
    native = [
        f"/v1/portfolios/{w.a_pid}",
        f"/v1/order?portfolio_id={w.a_pid}",
        f"/v1/order/{w.a_rest_id}",
        f"/v1/portfolios/{w.a_pid}/fills",
        f"/v1/portfolios/{w.a_pid}/ledger",
        f"/v1/portfolios/{w.a_pid}/signals",
        f"/v1/portfolios/{w.a_pid}/signals/{w.a_signal_id}",
        f"/v1/portfolios/{w.a_pid}/api-keys",
        f"/v1/portfolios/{w.a_pid}/webhook-tokens",
        "/v1/user/api-keys",
        "/v1/inbox",
        f"/app/portfolios/{w.a_pid}",
    ]
    for url in native:
        response = await w.a.get(url)
        assert response.status_code == 200, (url, response.text)
        assert leaks(response.json() if url.startswith("/v1") else response.text, w, ""), url
    async with client_for(app, headers={"X-MBX-APIKEY": w.a_compat_key}) as a_bot:
        for path, params in (
            ("/v2/account", {}),
            ("/v2/balance", {}),
            ("/v2/positionRisk", {"symbol": "ETHUSDT"}),
            ("/v1/openOrders", {}),
            ("/v1/allOrders", {"symbol": "BTCUSDT"}),
            ("/v1/userTrades", {"symbol": "ETHUSDT"}),
            ("/v1/income", {}),
        ):
            response = await a_bot.get(f"/fapi{path}?{sign(w.a_compat_secret, params)}")
            assert response.status_code == 200, (path, response.text)
            assert leaks(response.json(), w, ""), path


HUGE_IDS = (2**31, 2**63)  # past a 32-bit id column, and past any 64-bit integer


def huge(values: Any, big: int) -> Any:
    """`values` with every integer …_id replaced by `big`."""
    if not isinstance(values, dict):
        return values
    return {k: big if k.endswith("_id") and isinstance(v, int) else v for k, v in values.items()}


async def test_ids_past_the_database_integer_range_are_not_found(
    app: FastAPI, user_factory: Callable[..., Awaitable[User]], live_url: str
) -> None:
    w = await build_world(app, await user_factory(), await user_factory())
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    failures: list[str] = []
    async with httpx.AsyncClient(
        transport=transport, base_url=ORIGIN, cookies=w.b.client.cookies, timeout=30
    ) as b:
        for big in HUGE_IDS:
            for probe in PROBES:
                carries_id = any(
                    key.endswith("_id")
                    for values in (
                        probe.path(w),
                        probe.query(w),
                        probe.body(w) if probe.body else {},
                    )
                    if isinstance(values, dict)
                    for key in values
                )
                if probe.once or not carries_id:  # no id to push out of range
                    continue
                url = "/v1" + probe.template.format(**huge(probe.path(w), big))
                kwargs: dict[str, Any] = {"params": huge(probe.query(w), big)}
                if probe.body is not None:
                    kwargs["json"] = huge(probe.body(w), big)
                headers = {} if probe.method in SAFE else w.b.write_headers()
                response = await b.request(probe.method, url, headers=headers, **kwargs)
                shaped = response.headers.get("content-type", "").startswith("application/json")
                if response.status_code not in (404, 422) or not shaped:
                    failures.append(f"{probe.method} {url} {kwargs}: {response.status_code}")
            page = await b.get(f"/app/portfolios/{big}")
            if page.status_code != 404:
                failures.append(f"GET /app/portfolios/{big}: {page.status_code}")
    for big in (2**31, 10**18 - 1):  # a channel name holds at most 18 digits
        try:
            async with socket(live_url, w.b_key) as ws:
                reply = await ws.subscribe(f"orders:{big}")
                if reply.get("error") != "portfolio_not_found":
                    failures.append(f"WS subscribe orders:{big}: {reply}")
        except Exception as exc:  # the server dropping the socket is the failure looked for
            failures.append(f"WS subscribe orders:{big}: {type(exc).__name__} {exc}")
    assert not failures, "\n".join(failures)


def test_every_refusal_code_of_the_walk_is_documented() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    text = (docs / "errors.md").read_text() + (docs / "webhooks.md").read_text()
    used = {code for probe in PROBES for code in probe.errors}
    used |= {"session_required", "webhook_not_found"}
    missing = sorted(code for code in used if f"`{code}`" not in text)
    assert missing == []
