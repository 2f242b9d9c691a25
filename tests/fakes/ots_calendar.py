"""A fake OpenTimestamps calendar on 127.0.0.1: it answers POST /digest as a real calendar does
(append a nonce, SHA-256, a pending attestation naming itself), serialized with the reference
library, so our real client code parses what a real calendar would send."""

import os
from dataclasses import dataclass, field

from fastapi import FastAPI, Request, Response
from opentimestamps.core.notary import PendingAttestation
from opentimestamps.core.op import OpAppend, OpSHA256
from opentimestamps.core.serialize import BytesSerializationContext
from opentimestamps.core.timestamp import Timestamp


@dataclass
class CalendarState:
    url: str = ""
    failures_left: int = 0  # answer HTTP 503 this many times first
    received: list[bytes] = field(default_factory=list)


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
        out = BytesSerializationContext()
        timestamp.serialize(out)
        return Response(out.getbytes(), media_type="application/vnd.opentimestamps.v1")

    return app
