"""Anchors after submission: pending OpenTimestamps proofs upgraded from the calendar once its
Bitcoin transaction is confirmed (pending → confirmed), and the optional TRON memo anchor sent
through a fake TRON node on loopback, signed by us, confirmed once it is in a block."""

import asyncio
import base64
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest
from coincurve import PrivateKey
from fastapi import FastAPI
from opentimestamps.core.notary import BitcoinBlockHeaderAttestation
from opentimestamps.core.serialize import BytesDeserializationContext
from opentimestamps.core.timestamp import DetachedTimestampFile

from papertrade.chain import tron
from papertrade.chain.jobs import anchor_names
from papertrade.chain.proofs import utc_day
from papertrade.chain.upgrade import upgrade_pending
from papertrade.config import Settings
from papertrade.kit.time import now_ms
from tests.chain.helpers import Calendar, fake_calendar, seal_today
from tests.chain.test_attestation import trade_a_day
from tests.conftest import client_for, running_app
from tests.fakes.tron_node import TronState, tron_app
from tests.liveserver import live_server

KEY = PrivateKey(bytes.fromhex("11" * 32))
OWNER, TO = "TQn9Y2khEsLJW1ChVWFMSMeRDow5KcbLSE", "TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf"


@dataclass
class Setup:
    app: FastAPI
    calendar: Calendar
    node: TronState
    code: str = ""


@pytest.fixture
async def setup(isolated_settings: Settings) -> AsyncIterator[Setup]:
    node = TronState(public_key=KEY.public_key.format())
    async with fake_calendar() as calendar, live_server(tron_app(node)) as node_url:
        settings = isolated_settings.model_copy(
            update={
                "ots_calendars": [calendar.url],
                "tron_anchor_url": node_url,
                "tron_anchor_key": KEY.secret.hex(),
                "tron_anchor_from": OWNER,
                "tron_anchor_to": TO,
                "trongrid_api_key": "grid-key",
                "tron_anchor_every_s": 0,  # the tests run the job themselves
                "attestation_every_s": 0,
                "ots_upgrade_every_s": 0,
            }
        )
        async with running_app(settings) as app:
            yield Setup(app, calendar, node)


async def root(app: FastAPI, day: str) -> dict[str, Any]:
    async with client_for(app) as anon:
        answer = await anon.get(f"/v1/chain/roots/{day}")
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


async def sealed_day(setup: Setup) -> str:
    _user, portfolio = await trade_a_day(setup.app)
    setup.code = portfolio["code"]
    days, anchored = await seal_today(setup.app, anchor_names(setup.app.state.ctx.settings))
    assert anchored == {"submitted": 1, "failed": 0}  # the calendar; TRON is its own job
    return days[0]


async def test_a_pending_proof_is_upgraded_once_bitcoin_confirms_it(setup: Setup) -> None:
    ctx = setup.app.state.ctx
    day = await sealed_day(setup)
    assert await upgrade_pending(ctx) == {"confirmed": 0, "pending": 1, "failed": 0}
    before = await root(setup.app, day)
    assert before["status"] == "anchored"
    ots_anchor = next(a for a in before["anchors"] if not a["calendar"].startswith("tron:"))
    assert ots_anchor["status"] == "submitted"
    assert ots_anchor["attestations"] == [f"pending:{setup.calendar.url}"]

    setup.calendar.state.confirmed_height = 871_234  # the calendar's transaction is mined
    assert await upgrade_pending(ctx) == {"confirmed": 1, "pending": 0, "failed": 0}
    assert await upgrade_pending(ctx) == {"confirmed": 0, "pending": 0, "failed": 0}  # done
    after = await root(setup.app, day)
    assert after["status"] == "confirmed"
    ots_anchor = next(a for a in after["anchors"] if not a["calendar"].startswith("tron:"))
    assert ots_anchor["status"] == "confirmed"
    assert "bitcoin:871234" in ots_anchor["attestations"]
    # the published .ots file now carries the Bitcoin attestation for the root itself
    ots = DetachedTimestampFile.deserialize(
        BytesDeserializationContext(base64.b64decode(after["ots"]))
    )
    assert ots.file_digest.hex() == after["statement_hash"]  # PTA2: the signed statement
    heights = [
        a.height
        for _m, a in ots.timestamp.all_attestations()
        if isinstance(a, BitcoinBlockHeaderAttestation)
    ]
    assert heights == [871_234]
    async with client_for(setup.app) as anon:  # the badge counts a confirmed day as verified
        badge = (await anon.get(f"/v1/chain/portfolios/{setup.code}")).json()
    assert badge["status"] == "verified" and badge["verified_through"] == utc_day(now_ms()), badge


async def test_the_tron_memo_anchor_is_signed_sent_and_confirmed(setup: Setup) -> None:
    ctx = setup.app.state.ctx
    day = await sealed_day(setup)
    assert await tron.run(ctx) == {"submitted": 1, "confirmed": 0, "failed": 0}
    sealed = await root(setup.app, day)
    (memo,) = setup.node.broadcast.values()  # the signature held: the node accepted it
    assert memo == f"PTA2:{day}:{sealed['statement_hash']}".encode()  # the statement's hash
    assert setup.node.api_keys == ["grid-key"]
    assert await tron.run(ctx) == {"submitted": 0, "confirmed": 0, "failed": 0}  # not mined
    setup.node.mine(61_234_567)
    assert await tron.run(ctx) == {"submitted": 0, "confirmed": 1, "failed": 0}
    after = await root(setup.app, day)
    (tron_anchor,) = [a for a in after["anchors"] if a["calendar"].startswith("tron:")]
    (txid,) = setup.node.broadcast
    assert tron_anchor["status"] == "confirmed"
    assert tron_anchor["attestations"] == [f"tron:{txid}", "tron-block:61234567"]
    assert after["status"] == "confirmed"


async def test_two_runs_at_once_send_one_memo(setup: Setup) -> None:
    ctx = setup.app.state.ctx
    await sealed_day(setup)
    first, second = await asyncio.gather(tron.run(ctx), tron.run(ctx))
    assert first["submitted"] + second["submitted"] == 1, (first, second)
    assert len(setup.node.broadcast) == 1  # one transaction paid for, not two
    setup.node.mine(61_234_568)
    assert await tron.run(ctx) == {"submitted": 0, "confirmed": 1, "failed": 0}


async def test_a_node_that_builds_another_transaction_is_not_signed_for(setup: Setup) -> None:
    ctx = setup.app.state.ctx
    day = await sealed_day(setup)
    setup.node.tamper = True
    assert await tron.run(ctx) == {"submitted": 0, "confirmed": 0, "failed": 1}
    assert setup.node.broadcast == {}
    anchors = (await root(setup.app, day))["anchors"]
    (tron_anchor,) = [a for a in anchors if a["calendar"].startswith("tron:")]
    assert tron_anchor["status"] == "retrying"
    assert "not the memo we asked for" in tron_anchor["error"]


def test_the_tron_anchor_is_off_by_default() -> None:
    assert Settings().tron_anchor_url is None
    assert all(not name.startswith("tron:") for name in anchor_names(Settings()))
