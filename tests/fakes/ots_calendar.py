"""A fake OpenTimestamps calendar on 127.0.0.1: it answers POST /digest as a real calendar does
(append a nonce, SHA-256, a pending attestation naming itself), serialized with the reference
library, so our real client code parses what a real calendar would send. Once
`confirmed_height` is set (the calendar's Bitcoin transaction got into a block),
GET /timestamp/<commitment> answers the path from each commitment it issued to a Bitcoin block
header attestation, as `ots upgrade` expects; before that, 404 "Pending confirmation in Bitcoin
blockchain"."""

import os
from dataclasses import dataclass, field

from fastapi import FastAPI, Request, Response
from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
from opentimestamps.core.op import OpAppend, OpSHA256
from opentimestamps.core.serialize import BytesSerializationContext
from opentimestamps.core.timestamp import Timestamp


@dataclass
class CalendarState:
    url: str = ""
    failures_left: int = 0  # answer HTTP 503 this many times first
    received: list[bytes] = field(default_factory=list)
    commitments: set[bytes] = field(default_factory=set)
    confirmed_height: int | None = None
    upgrade_requests: int = 0


def calendar_app(state: CalendarState) -> FastAPI:
    app = FastAPI()

    @app.post("/digest")
    async def digest(request: Request) -> Response:
        body = await request.body()
        if state.failures_left > 0:
            state.failures_left -= 1
            return Response("busy", status_code=503)
        state.received.append(body)
        timestamp = Timestamp(body)
        appended = timestamp.ops.add(OpAppend(os.urandom(16)))
        commitment = appended.ops.add(OpSHA256())
        commitment.attestations.add(PendingAttestation(state.url))
        state.commitments.add(commitment.msg)
        out = BytesSerializationContext()
        timestamp.serialize(out)
        return Response(out.getbytes(), media_type="application/vnd.opentimestamps.v1")

    @app.get("/timestamp/{commitment}")
    async def timestamp(commitment: str) -> Response:
        state.upgrade_requests += 1
        try:
            msg = bytes.fromhex(commitment)
        except ValueError:
            return Response("bad commitment", status_code=400)
        if msg not in state.commitments:
            return Response("Not found", status_code=404)
        if state.confirmed_height is None:
            return Response("Pending confirmation in Bitcoin blockchain", status_code=404)
        upgraded = Timestamp(msg)
        merkle = upgraded.ops.add(OpAppend(os.urandom(32))).ops.add(OpSHA256())
        merkle.attestations.add(BitcoinBlockHeaderAttestation(state.confirmed_height))
        out = BytesSerializationContext()
        upgraded.serialize(out)
        return Response(out.getbytes(), media_type="application/vnd.opentimestamps.v1")

    return app
