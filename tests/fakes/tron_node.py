"""A fake TRON full node (TronGrid's /wallet/* HTTP API) on 127.0.0.1, for the memo anchor.

It builds a transaction whose raw data carries the memo and whose txID is the SHA-256 of that
raw data (as a real node does), accepts a broadcast only when the signature recovers to the
sending account's public key, and reports the transaction in a block once a test mines it.
`tamper` makes it build a transaction without our memo (the client must refuse to sign it)."""

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

from coincurve import PublicKey
from fastapi import FastAPI, Request
from starlette.responses import JSONResponse


@dataclass
class TronState:
    public_key: bytes  # the sender's, compressed
    tamper: bool = False
    built: dict[str, dict[str, Any]] = field(default_factory=dict)
    broadcast: dict[str, bytes] = field(default_factory=dict)  # txID → memo
    blocks: dict[str, int] = field(default_factory=dict)  # txID → block, once mined
    api_keys: list[str | None] = field(default_factory=list)

    def mine(self, block: int = 61_000_000) -> None:
        for txid in self.broadcast:
            self.blocks.setdefault(txid, block)


def tron_app(state: TronState) -> FastAPI:
    app = FastAPI()

    @app.post("/wallet/createtransaction")
    async def create(request: Request) -> JSONResponse:
        state.api_keys.append(request.headers.get("TRON-PRO-API-KEY"))
        body = await request.json()
        memo = bytes.fromhex(body.get("extra_data", ""))
        if state.tamper:
            memo = b"something else"
        raw = b"\x0a\x02" + os.urandom(8) + b"\x52" + bytes([len(memo) % 256]) + memo
        txid = hashlib.sha256(raw).hexdigest()
        tx = {
            "visible": True,
            "txID": txid,
            "raw_data": {"data": memo.hex(), "contract": [{"type": "TransferContract"}]},
            "raw_data_hex": raw.hex(),
        }
        state.built[txid] = tx
        return JSONResponse(tx)

    @app.post("/wallet/broadcasttransaction")
    async def broadcast(request: Request) -> JSONResponse:
        body = await request.json()
        txid = str(body.get("txID", ""))
        if txid not in state.built or not body.get("signature"):
            return JSONResponse({"result": False, "code": "OTHER_ERROR"})
        signature = bytes.fromhex(body["signature"][0])
        try:
            signer = PublicKey.from_signature_and_message(
                signature, bytes.fromhex(txid), hasher=None
            )
        except Exception:
            return JSONResponse({"result": False, "code": "SIGERROR"})
        if signer.format() != state.public_key:
            return JSONResponse({"result": False, "code": "SIGERROR"})
        state.broadcast[txid] = bytes.fromhex(state.built[txid]["raw_data"]["data"])
        return JSONResponse({"result": True, "txid": txid})

    @app.post("/wallet/gettransactioninfobyid")
    async def info(request: Request) -> JSONResponse:
        txid = str((await request.json()).get("value", ""))
        if txid not in state.blocks:
            return JSONResponse({})
        return JSONResponse({"id": txid, "blockNumber": state.blocks[txid], "receipt": {}})

    return app
