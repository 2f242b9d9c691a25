"""Roots every period (issue 31): a fill placed now is proven through the public API within a
few seconds, and both verifiers (`papertrade verify --url` and the standalone script, as a
process) fail, naming the fault, when a proxy in front of the service withholds, reorders or
edits events, answers errors or nothing, or serves a root that does not follow the one before;
and a server whose answer is malformed (not HTTP, cut short, not JSON) is a one-line failure.
One root a day goes to the anchors; it names the roots before it."""

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, redirect_stdout
from dataclasses import dataclass, field
from io import StringIO
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request, Response
from sqlalchemy import select

from papertrade import cli
from papertrade.chain.attest import seal_finished_days
from papertrade.chain.proofs import leaf_hash, root_from_path, statement_hash
from papertrade.chain.signing import attestation_key, signature_holds
from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.kit.time import now_ms
from papertrade.models import Attestation, AttestationAnchor
from tests.chain.helpers import DAY_MS, chained
from tests.chain.test_attestation import SCRIPT, trade_a_day
from tests.conftest import client_for, make_settings, running_app
from tests.liveserver import live_server
from tests.trading_api.helpers import market, set_price
from tests.ws.conftest import fresh_database

Fault = Callable[[str, dict[str, Any]], Any]  # (path with query, answer JSON) → what to serve


@dataclass
class Proxy:
    """Between the verifier and the service: passes everything on, except what `fault` changes
    (its JSON answer rewritten), `status` (that answer instead) or `stall` (no answer for so
    long) for the paths `matches` picks."""

    upstream: httpx.AsyncClient  # one client for every relayed request
    matches: Callable[[str], bool] = lambda _path: False
    fault: Fault | None = None
    status: int | None = None
    stall: float = 0.0
    seen: list[str] = field(default_factory=list)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.get("/{path:path}")
        async def relay(path: str, request: Request) -> Response:
            target = "/" + path + (f"?{request.url.query}" if request.url.query else "")
            self.seen.append(target)
            if self.matches(target):
                if self.stall:
                    await asyncio.sleep(self.stall)
                if self.status is not None:
                    return Response(b'{"error":"internal"}', self.status)
            answer = await self.upstream.get(target)
            body = answer.content
            if self.matches(target) and self.fault is not None:
                body = json.dumps(self.fault(target, answer.json())).encode()
            return Response(body, answer.status_code, media_type="application/json")

        return app


@asynccontextmanager
async def proxy_in_front(upstream: str) -> AsyncIterator[tuple[Proxy, str]]:
    async with httpx.AsyncClient(base_url=upstream) as client:
        proxy = Proxy(client)
        async with live_server(proxy.app()) as url:
            yield proxy, url


async def both_verifiers(url: str, code: str, wait_s: float = 5) -> list[tuple[int, str]]:
    """`papertrade verify --url` (in process: its output and exit status) and the standalone
    script (its own process)."""

    def command() -> tuple[int, str]:
        out = StringIO()
        with redirect_stdout(out):
            try:
                cli.main(["verify", code, "--url", url, "--timeout", str(wait_s)])
                status = 0
            except SystemExit as exc:
                status = int(exc.code or 0)
        return status, out.getvalue()

    first = await asyncio.to_thread(command)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(SCRIPT),
        url,
        code,
        "--timeout",
        str(wait_s),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), 60)
    assert not err, err.decode()  # never a traceback
    return [first, (process.returncode or 0, out.decode())]


QUIET = {"attestation_every_s": 0, "ots_upgrade_every_s": 0, "ots_calendars": []}


@pytest.fixture
async def app(isolated_settings: Settings) -> AsyncIterator[FastAPI]:
    async with running_app(isolated_settings.model_copy(update=QUIET)) as application:
        yield application


async def seal(app: FastAPI) -> list[str]:
    """The root of the period that has just ended (periods of one second)."""
    ctx = app.state.ctx
    await asyncio.sleep(1.1)  # the events' second is over
    async with ctx.transaction() as uow:
        return await seal_finished_days(
            uow.session, attestation_key(ctx.settings), [], now_ms(), every_s=1
        )


async def two_roots(app: FastAPI) -> str:
    """Events 1–4 in one root, 5–6 in the next."""
    user, portfolio = await trade_a_day(app)
    assert len(await seal(app)) == 1
    await set_price(app, "BTCUSDT", "52000")
    await market(user, portfolio["id"], "BTCUSDT", "buy", "0.2")
    await market(user, portfolio["id"], "BTCUSDT", "sell", "0.2")
    await chained(app)
    assert len(await seal(app)) == 1
    return str(portfolio["code"])


@dataclass
class Sealed:
    app: FastAPI
    url: str  # the service on loopback
    code: str  # its portfolio, with two roots: events 1–4, then 5–6


@pytest.fixture(scope="module")
async def sealed(
    tmp_path_factory: pytest.TempPathFactory, uses_database: None
) -> AsyncIterator[Sealed]:
    """One service for the tests that put a faulty proxy in front of it: they only read it."""
    tmp = tmp_path_factory.mktemp("period_roots")
    async with fresh_database("period_roots", tmp) as url:
        settings = make_settings(url, tmp, **QUIET)
        async with running_app(settings) as app, live_server(app) as served:
            yield Sealed(app, served, await two_roots(app))


async def test_a_fill_placed_now_is_proven_within_seconds_through_the_public_api(
    isolated_settings: Settings,
) -> None:
    every_second = {
        "attestation_every_s": 1,
        "attestation_root_every_s": 1,
        "ots_upgrade_every_s": 0,
        "ots_calendars": [],
    }
    async with running_app(isolated_settings.model_copy(update=every_second)) as app:
        user, portfolio = await trade_a_day(app)
        code = portfolio["code"]
        await market(user, portfolio["id"], "BTCUSDT", "buy", "0.05")
        fills = (await user.get(f"/v1/portfolios/{portfolio['id']}/fills")).json()
        fill_id = max(f["id"] for f in fills)
        async with live_server(app) as url, httpx.AsyncClient(base_url=url) as anon:
            first: dict[str, Any] | None = None
            deadline = asyncio.get_running_loop().time() + 60
            while True:
                answer = await anon.get(f"/v1/chain/portfolios/{code}/fills/{fill_id}/proof")
                if answer.status_code == 200:
                    first = first or answer.json()
                    if answer.json()["root"] is not None:
                        break
                else:  # not chained yet: the outbox consumer is a moment behind
                    assert answer.json()["error"] == "chain_event_not_found", answer.text
                assert asyncio.get_running_loop().time() < deadline, "no root within a minute"
                await asyncio.sleep(0.2)
            proof = answer.json()
            assert first is not None and first["entry"]["seq"] == 5
            if first["root"] is None:  # before its root: the entry, its place, when it is due
                assert first["entry"]["hash"] == proof["entry"]["hash"]
                assert first["root_due"] and first["head_seq"] >= 5
            root = proof["root"]
            leaf = leaf_hash(proof["entry"]["hash"])
            path = [bytes.fromhex(p) for p in proof["path"]]
            rebuilt = root_from_path(leaf, proof["leaf_index"], proof["tree_size"], path)
            assert rebuilt.hex() == root["root"]
            key = (await anon.get("/v1/chain/key")).json()["public_key"]
            assert signature_holds(key, root["statement"].encode(), root["signature"])
            assert f"\n{code} " in root["statement"]
            for status, printed in await both_verifiers(url, code):
                assert status == 0, printed
                assert f"VERIFIED: 5 events of {code} through the root of" in printed, printed


async def test_the_verifiers_say_how_far_a_root_covers_and_what_waits_for_the_next(
    app: FastAPI,
) -> None:
    user, portfolio = await trade_a_day(app)
    code = portfolio["code"]
    assert len(await seal(app)) == 1  # events 1-4
    await market(user, portfolio["id"], "BTCUSDT", "buy", "0.2")
    await market(user, portfolio["id"], "BTCUSDT", "sell", "0.2")
    await chained(app)  # events 5-6, in no root yet
    async with live_server(app) as url:
        for status, printed in await both_verifiers(url, code):
            assert status == 0, printed
            last = printed.strip().splitlines()[-1]
            assert last.startswith(f"VERIFIED: 4 events of {code} through the root of "), printed
            assert last.endswith(" UTC; 2 newer events not yet in a root"), printed
            assert "seq 5–6: not in a root yet; due " in printed, printed


async def test_a_pending_event_is_answered_with_its_place_and_when_its_root_is_due(
    app: FastAPI,
) -> None:
    _user, portfolio = await trade_a_day(app)
    code = portfolio["code"]
    async with client_for(app) as anon:
        answer = await anon.get(f"/v1/chain/portfolios/{code}/events/4/proof")
    assert answer.status_code == 200, answer.text
    pending = answer.json()
    assert pending["root"] is None and pending["root_due"] and pending["head_seq"] == 4
    assert pending["entry"]["seq"] == 4 and len(pending["entry"]["hash"]) == 64
    async with live_server(app) as url:
        for status, printed in await both_verifiers(url, code):
            assert status == 1 and "none in a signed root yet" in printed, printed


def drop(index: int) -> Fault:
    def fault(_path: str, answer: dict[str, Any]) -> Any:
        if answer["items"]:
            del answer["items"][index]
        return answer

    return fault


def swap(_path: str, answer: dict[str, Any]) -> Any:
    items = answer["items"]
    if len(items) > 3:
        items[2], items[3] = items[3], items[2]
    return answer


def edit_amount(_path: str, answer: dict[str, Any]) -> Any:
    for item in answer["items"]:
        if '"qty":"0.1"' in item["event"] and item["seq"] == 3:
            item["event"] = item["event"].replace('"qty":"0.1"', '"qty":"0.01"')
    return answer


EVENTS = "/events?"


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        (drop(0), "seq 1 is missing (withheld by the service)"),
        (drop(2), "seq 3 is missing (withheld by the service)"),
        (drop(-1), "seq 6 is withheld: the root of"),
        (swap, "events out of order: seq 4 is served where seq 3 belongs"),
        (edit_amount, "seq 3: the event does not hash to its hash (edited)"),
    ],
    ids=["first", "middle", "last", "reordered", "edited"],
)
async def test_withheld_reordered_or_edited_events_fail_both_verifiers(
    sealed: Sealed, fault: Fault, message: str
) -> None:
    code = sealed.code
    async with proxy_in_front(sealed.url) as (proxy, proxied):
        for status, printed in await both_verifiers(proxied, code):
            assert status == 0 and "VERIFIED: 6 events" in printed, printed  # untouched
        proxy.matches = lambda path: EVENTS in path
        proxy.fault = fault
        for status, printed in await both_verifiers(proxied, code):
            assert status == 1, printed
            assert f"NOT VERIFIED: {message}" in printed, printed
            assert "Traceback" not in printed


@pytest.mark.parametrize(
    ("where", "status", "stall", "message"),
    [
        ("/proof", 500, 0.0, "/proof answered HTTP 500"),
        ("/v1/chain/roots", 500, 0.0, "GET /v1/chain/roots?after="),
        ("/proof", None, 3.0, "/proof failed: timed out"),
        ("/v1/chain/roots", None, 3.0, "failed: timed out"),
    ],
    ids=["proof-500", "roots-500", "proof-timeout", "roots-timeout"],
)
async def test_errors_and_silence_are_failures_with_a_reason(
    sealed: Sealed, where: str, status: int | None, stall: float, message: str
) -> None:
    code = sealed.code
    async with proxy_in_front(sealed.url) as (proxy, proxied):
        proxy.matches = lambda path: where in path
        proxy.status, proxy.stall = status, stall
        for exit_status, printed in await both_verifiers(proxied, code, wait_s=1):
            assert exit_status == 1, printed
            last = printed.strip().splitlines()[-1]
            assert last.startswith("NOT VERIFIED: ") and message in last, printed


@asynccontextmanager
async def answering(reply: bytes) -> AsyncIterator[str]:
    """A server on 127.0.0.1 that answers every request with `reply`, byte for byte."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(reply)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (b"garbage\r\n\r\n", "answered malformed HTTP (BadStatusLine)"),
        (
            b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"public_key"',
            "answered malformed HTTP (IncompleteRead)",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(DEEP), DEEP),
            "answered JSON nested too deeply to read",
        ),
        (
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            "answered something that is not JSON",
        ),
    ],
    ids=["not-http", "cut-short", "nested-too-deep", "not-json"],
)
async def test_a_malformed_answer_is_a_failure_with_a_reason_not_a_traceback(
    reply: bytes, message: str
) -> None:
    async with answering(reply) as url:
        for status, printed in await both_verifiers(url, "P0000001", wait_s=5):
            assert status == 1, printed
            last = printed.strip().splitlines()[-1]
            assert last.startswith(f"NOT VERIFIED: GET /v1/chain/key {message}"), printed


async def test_a_root_that_does_not_follow_its_predecessor_fails(sealed: Sealed) -> None:
    code = sealed.code
    key = attestation_key(sealed.app.state.ctx.settings)
    async with sealed.app.state.ctx.db.reader() as session:
        first, second = (await session.scalars(select(Attestation).order_by(Attestation.day))).all()
    assert second.statement is not None and first.statement is not None
    assert f"prev {statement_hash(first.statement.encode())}" in second.statement

    def rewritten(_path: str, answer: dict[str, Any]) -> Any:
        # a second root, signed with the service's own key, that names another predecessor
        for root in answer["items"]:
            if root["day"] == second.day:
                lines = root["statement"].split("\n")
                lines[3] = "prev " + "ab" * 32
                root["statement"] = "\n".join(lines)
                root["signature"] = key.sign(root["statement"].encode()).hex()
                root["statement_hash"] = statement_hash(root["statement"].encode())
        return answer

    async with proxy_in_front(sealed.url) as (proxy, proxied):
        proxy.matches = lambda path: path.startswith("/v1/chain/roots?")
        proxy.fault = rewritten
        for status, printed in await both_verifiers(proxied, code):
            assert status == 1, printed
            assert "does not follow the root of" in printed, printed


async def test_the_migration_keeps_daily_roots_and_chains_the_first_period_root_to_them(
    isolated_settings: Settings,
) -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from sqlalchemy import text
    from sqlalchemy.ext.asyncio import AsyncSession

    from papertrade.chain.proofs import GENESIS, merkle_root, statement
    from tests.foundation.test_email_case import _engine, _migrate

    key = Ed25519PrivateKey.generate()
    old_root = merkle_root([leaf_hash("11" * 32), leaf_hash("22" * 32)]).hex()
    old_statement = statement("2026-11-27", old_root, 2)
    async with _engine(isolated_settings.database_url) as engine:
        await _migrate(engine, "0019_paper_stays_paper")
        async with engine.begin() as db:
            entry = (
                "INSERT INTO chain_entries (portfolio_id, seq, day, source, source_id, ts, body, "
                "hash) VALUES (7, :seq, :day, 'fill', :seq, 0, '{}', :hash)"
            )
            for seq, day, digest in [
                (1, "2026-11-27", "11" * 32),
                (2, "2026-11-27", "22" * 32),
                (3, "2026-11-28", "33" * 32),  # its day not sealed yet
            ]:
                await db.execute(text(entry), {"seq": seq, "day": day, "hash": digest})
            await db.execute(
                text(
                    "INSERT INTO attestations (day, root, leaf_count, ranges, signature, "
                    "public_key, status, created_at) VALUES ('2026-11-27', :root, 2, "
                    "'{\"7\":[1,2]}', :sig, :pub, 'anchored', 1)"
                ),
                {"root": old_root, "sig": key.sign(old_statement).hex(), "pub": "00" * 32},
            )
            await db.execute(
                text(
                    "INSERT INTO attestation_anchors (day, calendar, status, proof, error, "
                    "attempts, updated_at) VALUES ('2026-11-27', 'https://cal', 'submitted', "
                    "'00', '', 1, 1)"
                )
            )
            await db.execute(
                text(
                    "INSERT INTO chain_heads (portfolio_id, seq, hash, last_fill_id, "
                    "last_ledger_id) VALUES (7, 3, :hash, 3, 0)"
                ),
                {"hash": "33" * 32},
            )
        await _migrate(engine, "head")
        async with engine.connect() as db:
            days = (await db.execute(text("SELECT seq, day FROM chain_entries ORDER BY seq"))).all()
            anchors = (await db.execute(text("SELECT day, status FROM attestation_anchors"))).all()
        assert [tuple(d) for d in days] == [
            (1, "2026-11-27"),
            (2, "2026-11-27"),
            (3, "2026-11-28T00:00:00Z"),  # joins the next period root
        ]
        assert [tuple(a) for a in anchors] == [("2026-11-27", "submitted")]  # kept
        async with AsyncSession(engine) as session, session.begin():
            old = await session.get(Attestation, "2026-11-27")
            assert old is not None and old.statement is None  # PTA1, as it was signed
            now = 1_795_881_600_000  # 2026-11-28 16:00 UTC
            sealed = await seal_finished_days(session, key, [], now, every_s=3600)
            assert sealed == ["2026-11-28T15:59:59Z"]
            new = await session.get(Attestation, sealed[0])
            assert new is not None and new.statement is not None
            signed, leaf_count = new.statement, new.leaf_count
        lines = signed.split("\n")
        assert lines[3] == f"prev {statement_hash(old_statement)}"  # chained to the PTA1 root
        assert lines[4:] == [f"P0000007 3 3 {'33' * 32}"]
        assert leaf_count == 1 and GENESIS not in lines[3]


def test_the_standalone_script_is_the_verifier_papertrade_runs() -> None:
    from pathlib import Path

    from papertrade.chain import standalone

    assert SCRIPT.read_bytes() == Path(standalone.__file__).read_bytes()


async def test_one_root_a_day_goes_to_the_anchors_and_names_the_ones_before(app: FastAPI) -> None:
    """Roots every second, anchored once a day: the first root is queued for the calendars,
    the next ones of the day are only signed (no anchor row), and the first root 24 hours
    after the last anchored one is queued again; its statement chains to the signed ones."""
    ctx: AppContext = app.state.ctx
    key = attestation_key(ctx.settings)
    user, portfolio = await trade_a_day(app)

    async def root_at(now: int) -> Attestation:
        async with ctx.transaction() as uow:
            sealed = await seal_finished_days(uow.session, key, ["https://cal"], now, every_s=1)
        assert len(sealed) == 1, sealed
        async with ctx.db.reader() as session:
            row = await session.get(Attestation, sealed[0])
        assert row is not None
        return row

    async def another_trade() -> None:
        await market(user, portfolio["id"], "BTCUSDT", "buy", "0.01")
        await chained(app)

    first = await root_at(now_ms() + 2000)  # a clock of the test's: roots a few seconds apart
    await another_trade()  # keyed after the first root, as an event committed after it is
    second = await root_at(first.created_at + 2000)
    await another_trade()
    next_day = await root_at(first.created_at + DAY_MS)
    assert [first.status, second.status, next_day.status] == ["queued", "signed", "queued"]
    async with ctx.db.reader() as session:
        anchors = (await session.scalars(select(AttestationAnchor.day))).all()
    assert sorted(anchors) == sorted([first.day, next_day.day])  # none for the signed root
    assert second.statement is not None and next_day.statement is not None
    assert f"prev {statement_hash(second.statement.encode())}" in next_day.statement
