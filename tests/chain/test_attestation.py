"""The attested track record end to end: fills and ledger rows join the portfolio's chain from
the outbox, a finished day is sealed (Merkle root, Ed25519 signature) and anchored at
OpenTimestamps calendars (fakes on loopback), the public endpoints serve status, roots, the
queue and inclusion proofs, and the verifier passes, then fails once a fill is edited."""

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from papertrade import cli
from papertrade.chain import verify
from papertrade.chain.attest import anchor_queued
from papertrade.chain.proofs import GENESIS, event_hash, leaf_hash, root_from_path, utc_day
from papertrade.config import Settings
from papertrade.kit.time import now_ms
from papertrade.models import ChainEntry, Fill
from tests.chain.helpers import chained, fake_calendar, seal_today
from tests.conftest import User, client_for, running_app, sign_up
from tests.liveserver import live_server
from tests.trading_api.helpers import market, set_price


@pytest.fixture
async def app(isolated_settings: Settings) -> AsyncIterator[FastAPI]:
    # The tests seal and anchor themselves: the scheduled jobs would race them for each step.
    quiet = {"attestation_every_s": 0, "ots_upgrade_every_s": 0}
    async with running_app(isolated_settings.model_copy(update=quiet)) as application:
        yield application


SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "verify_track_record.py"


async def standalone(url: str, code: str) -> tuple[int, str]:
    """The documented standalone verifier, run as its own process."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, str(SCRIPT), url, code, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode()


async def trade_a_day(app: FastAPI) -> tuple[User, dict[str, Any]]:
    """A public portfolio: deposit, top-up, a buy and a sell of BTC."""
    user = await sign_up(app)
    portfolio = await user.portfolio(visibility="public", initial_balance="10000")
    topped = await user.post(f"/v1/portfolios/{portfolio['id']}/top-up", json={"amount": "250"})
    assert topped.status_code == 200, topped.text
    await set_price(app, "BTCUSDT", "50000")
    await market(user, portfolio["id"], "BTCUSDT", "buy", "0.1")
    await set_price(app, "BTCUSDT", "51000")
    await market(user, portfolio["id"], "BTCUSDT", "sell", "0.1")
    await chained(app)
    return user, portfolio


async def published_events(app: FastAPI, code: str) -> list[dict[str, Any]]:
    async with client_for(app) as anon:
        answer = await anon.get(f"/v1/chain/portfolios/{code}/events")
    assert answer.status_code == 200, answer.text
    return list(answer.json()["items"])


async def test_fills_and_ledger_rows_form_a_linked_chain(app: FastAPI) -> None:
    user, portfolio = await trade_a_day(app)
    events = await published_events(app, portfolio["code"])
    bodies = [json.loads(e["event"]) for e in events]
    assert [b["event_type"] for b in bodies] == ["ledger.deposit", "ledger.top_up", "fill", "fill"]
    assert [b["seq"] for b in bodies] == [1, 2, 3, 4]
    assert bodies[0]["prev_hash"] == GENESIS
    for previous, event in zip(events, bodies[1:], strict=False):
        assert event["prev_hash"] == previous["hash"]
    assert all(event_hash(e["event"]) == e["hash"] for e in events)
    fills = (await user.get(f"/v1/portfolios/{portfolio['id']}/fills")).json()
    sell = next(f for f in fills if f["side"] == "sell")
    sold = bodies[3]
    assert (sold["side"], sold["qty"], sold["price"]) == ("sell", "0.1", "51000")
    assert sold["realized_pnl"] == "100"  # 0.1 × (51000 − 50000)
    assert sold["ref"] == f"fill:{sell['id']}" and sold["fee"] == str(sell["commission"])
    assert bodies[1]["amount"] == "250" and bodies[1]["balance_after"] == "10250"

    async with client_for(app) as anon:
        status = (await anon.get(f"/v1/chain/portfolios/{portfolio['code']}")).json()
    assert status["status"] == "pending" and status["head_seq"] == 4
    assert status["head_hash"] == events[-1]["hash"] and status["verified_through"] is None


async def test_two_runs_at_once_submit_a_root_once(app: FastAPI) -> None:
    await trade_a_day(app)
    async with fake_calendar(failures=1) as busy:
        _days, first = await seal_today(app, [busy.url])
        assert first == {"submitted": 0, "failed": 1} and busy.state.received == []
        ctx = app.state.ctx
        one, two = await asyncio.gather(anchor_queued(ctx), anchor_queued(ctx))
        assert one["submitted"] + two["submitted"] == 1, (one, two)
        assert len(busy.state.received) == 1  # the calendar was asked once, not twice


async def test_a_sealed_anchored_day_verifies_and_an_edited_fill_fails(app: FastAPI) -> None:
    _user, portfolio = await trade_a_day(app)
    code = portfolio["code"]
    async with fake_calendar() as good, fake_calendar(failures=1) as busy:
        days, anchored = await seal_today(app, [good.url, busy.url])
        today = utc_day(now_ms())
        assert len(days) == 1 and days[0] > today  # the root of the last finished hour
        key = days[0]
        assert anchored == {"submitted": 1, "failed": 1}
        async with client_for(app) as anon:
            queued = (await anon.get("/v1/chain/queue")).json()["items"]
            assert [q["day"] for q in queued] == [key]  # the busy calendar has not taken it
            _days, again = await seal_today(app, [good.url, busy.url])
            assert again == {"submitted": 1, "failed": 0}
            assert (await anon.get("/v1/chain/queue")).json()["items"] == []
            assert good.state.received == busy.state.received  # the same 32-byte root

            status = (await anon.get(f"/v1/chain/portfolios/{code}")).json()
            assert status["status"] == "verified" and status["verified_through"] == today
            root = (await anon.get(f"/v1/chain/roots/{key}")).json()
            assert root["status"] == "anchored" and root["ots"] and root["format"] == "PTA2"
            # the anchors hold the signed statement's hash: it names the previous root too
            assert good.state.received == [bytes.fromhex(root["statement_hash"])]
            assert f"\n{code} 1 4 {status['head_hash']}" in root["statement"]
            assert root["ranges"][str(portfolio["id"])] == [1, 4]
            assert {a["status"] for a in root["anchors"]} == {"submitted"}
            assert root["anchors"][0]["attestations"] == [f"pending:{good.url}"]

            proof = (await anon.get(f"/v1/chain/portfolios/{code}/events/3/proof")).json()
            rebuilt = root_from_path(
                leaf_hash(proof["entry"]["hash"]),
                proof["leaf_index"],
                proof["tree_size"],
                [bytes.fromhex(p) for p in proof["path"]],
            )
            assert rebuilt.hex() == root["root"]
            fill_id = int(json.loads(proof["entry"]["event"])["ref"].split(":")[1])
            by_fill = await anon.get(f"/v1/chain/portfolios/{code}/fills/{fill_id}/proof")
            assert by_fill.json()["entry"] == proof["entry"]

        async with live_server(app) as url:
            report = await asyncio.to_thread(verify.published, url, code)
            assert report.ok, report.render()
            assert report.covered == 4 and report.anchored_through == key
            status, printed = await standalone(url, code)
            assert status == 0, printed
            assert f"VERIFIED: 4 events of {code} through the root of" in printed, printed
            assert f"PendingAttestation('{good.url}')" in printed

            ctx = app.state.ctx
            assert (await verify.stored(ctx, code)).ok
            async with ctx.transaction() as uow:  # someone edits a stored fill
                fill = await uow.session.get(Fill, fill_id)
                assert fill is not None
                fill.price += 1
            edited = await verify.stored(ctx, code)
            assert not edited.ok
            assert any(f"fill {fill_id} was edited (price)" in p for p in edited.problems)

            async with ctx.transaction() as uow:  # …and rewrites the published event to match
                entry = await uow.session.scalar(
                    select(ChainEntry).where(
                        ChainEntry.source == "fill", ChainEntry.source_id == fill_id
                    )
                )
                assert entry is not None
                assert '"price":"50000"' in entry.body
                entry.body = entry.body.replace('"price":"50000"', '"price":"50001"')
            report = await asyncio.to_thread(verify.published, url, code)
            assert not report.ok
            assert "seq 3: the event does not hash to its hash (edited)" in report.problems
            status, printed = await standalone(url, code)
            assert status == 1 and "FAIL: seq 3: the event does not hash" in printed, printed

            with pytest.raises(SystemExit) as failed:
                await asyncio.to_thread(cli.main, ["verify", code, "--url", url])
            assert failed.value.code == 1


async def test_private_chains_stay_private_and_bad_days_get_the_error_shape(
    app: FastAPI,
) -> None:
    user = await sign_up(app)
    private = await user.portfolio()
    async with client_for(app) as anon:
        hidden = await anon.get(f"/v1/chain/portfolios/{private['code']}")
        assert hidden.status_code == 404 and hidden.json()["error"] == "portfolio_not_found"
        assert (await user.get(f"/v1/chain/portfolios/{private['code']}")).status_code == 200
        missing = await anon.get("/v1/chain/roots/2020-01-01")
        assert missing.status_code == 404 and missing.json()["error"] == "attestation_not_found"
        bad = await anon.get("/v1/chain/roots/yesterday")
        assert bad.status_code == 422 and set(bad.json()) >= {"error", "msg"}
        key = (await anon.get("/v1/chain/key")).json()
        assert key["algorithm"] == "Ed25519" and len(key["public_key"]) == 64
