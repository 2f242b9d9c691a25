"""The optional TRON memo anchor (off unless `TRON_ANCHOR_URL` is set): each sealed root's
signed statement (`PTA1:<day>:<root>:<leaf count>`) is written into the memo (`extra_data`) of
a 1-sun TRX transfer, over a TRON node's HTTP API (TronGrid's /wallet/* endpoints):

1. `POST /wallet/createtransaction` (visible addresses, the memo as hex): the node builds the
   transaction; we check that its txID is the SHA-256 of the raw data it returned and that the
   raw data carries our memo, so the node cannot make us sign something else;
2. the txID is signed here with the operator's secp256k1 key (65-byte recoverable signature,
   as TRON wants it; coincurve) and `POST /wallet/broadcasttransaction`;
3. later runs ask `POST /wallet/gettransactioninfobyid` until the transaction is in a block:
   the anchor is then `confirmed` with its block number.

A run claims an anchor (`sending`, chain/claims.py) before it builds the transaction, so two
runs at once cannot both pay for the same memo.

The node is the operator's setting (TronGrid or their own node), never a user's URL.
"""

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import httpx
from coincurve import PrivateKey
from sqlalchemy import or_, select

from papertrade.chain import claims
from papertrade.chain.proofs import memo
from papertrade.chain.upgrade import confirm_day
from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.kit import tls
from papertrade.kit.time import now_ms
from papertrade.models import Attestation, AttestationAnchor

ATTEMPTS = 10
TIMEOUT_S = 10.0


class TronError(Exception):
    """The node refused the transaction or answered something we will not sign."""


@dataclass(frozen=True, slots=True)
class TronConfig:
    url: str
    key: bytes
    owner: str
    to: str
    api_key: str | None

    @property
    def name(self) -> str:
        return f"tron:{self.url}"


def config(settings: Settings) -> TronConfig | None:
    if not settings.tron_anchor_url:
        return None
    return TronConfig(
        settings.tron_anchor_url.rstrip("/"),
        bytes.fromhex(settings.tron_anchor_key),
        settings.tron_anchor_from,
        settings.tron_anchor_to,
        settings.trongrid_api_key,
    )


def _headers(cfg: TronConfig) -> dict[str, str]:
    return {"TRON-PRO-API-KEY": cfg.api_key} if cfg.api_key else {}


async def _post(client: httpx.AsyncClient, cfg: TronConfig, path: str, body: Any) -> Any:
    try:
        answer = await client.post(f"{cfg.url}{path}", json=body, headers=_headers(cfg))
    except httpx.HTTPError as exc:
        raise TronError(f"{type(exc).__name__}: {exc}") from exc
    if answer.status_code != 200:
        raise TronError(f"the node answered HTTP {answer.status_code}")
    try:
        return answer.json()
    except ValueError as exc:
        raise TronError("the node's answer is not JSON") from exc


async def send_memo(client: httpx.AsyncClient, cfg: TronConfig, memo: bytes) -> str:
    """Build, check, sign and broadcast the memo transaction; its txID."""
    built = await _post(
        client,
        cfg,
        "/wallet/createtransaction",
        {
            "owner_address": cfg.owner,
            "to_address": cfg.to,
            "amount": 1,
            "extra_data": memo.hex(),
            "visible": True,
        },
    )
    if not isinstance(built, dict) or "txID" not in built or "raw_data_hex" not in built:
        raise TronError(f"the node built no transaction: {str(built)[:200]}")
    raw = bytes.fromhex(str(built["raw_data_hex"]))
    if hashlib.sha256(raw).hexdigest() != built["txID"] or memo not in raw:
        raise TronError("the node's transaction is not the memo we asked for")
    signature = PrivateKey(cfg.key).sign_recoverable(bytes.fromhex(built["txID"]), hasher=None)
    sent = await _post(
        client, cfg, "/wallet/broadcasttransaction", {**built, "signature": [signature.hex()]}
    )
    if not isinstance(sent, dict) or sent.get("result") is not True:
        raise TronError(f"the node refused the transaction: {str(sent)[:200]}")
    return str(built["txID"])


async def block_of(client: httpx.AsyncClient, cfg: TronConfig, txid: str) -> int | None:
    info = await _post(client, cfg, "/wallet/gettransactioninfobyid", {"value": txid})
    if isinstance(info, dict) and isinstance(info.get("blockNumber"), int):
        return int(info["blockNumber"])
    return None  # not in a block yet ({} is the node's answer then)


async def run(ctx: AppContext) -> dict[str, int]:
    """Submit the roots waiting for their TRON memo, then confirm the submitted ones."""
    cfg = config(ctx.settings)
    counts = {"submitted": 0, "confirmed": 0, "failed": 0}
    if cfg is None:
        return counts
    async with ctx.db.reader() as session:
        rows = (
            await session.execute(
                select(
                    AttestationAnchor.id,
                    AttestationAnchor.status,
                    AttestationAnchor.proof,
                    Attestation.day,
                    Attestation.root,
                    Attestation.leaf_count,
                    Attestation.statement,
                )
                .join(Attestation, Attestation.day == AttestationAnchor.day)
                .where(
                    AttestationAnchor.calendar == cfg.name,
                    or_(AttestationAnchor.status == "submitted", claims.claimable()),
                    AttestationAnchor.attempts < ATTEMPTS,
                )
                .order_by(AttestationAnchor.id)
            )
        ).all()
    async with httpx.AsyncClient(timeout=TIMEOUT_S, verify=tls.client_context()) as client:
        for anchor_id, status, proof, day, root, leaf_count, signed in rows:
            try:
                if status == "submitted":
                    txid = str(json.loads(proof or "{}").get("txid", ""))
                    block = await block_of(client, cfg, txid)
                    if block is not None:
                        await _record(ctx, anchor_id, {"txid": txid, "block": block}, "")
                        counts["confirmed"] += 1
                    continue
                if not await claims.claim(ctx, anchor_id):
                    continue  # another run is sending it
                txid = await send_memo(client, cfg, memo(day, root, leaf_count, signed))
                await _record(ctx, anchor_id, {"txid": txid}, "")
                counts["submitted"] += 1
            except TronError as exc:
                await _record(ctx, anchor_id, None, str(exc)[:300])
                counts["failed"] += 1
    return counts


async def _record(ctx: AppContext, anchor_id: int, sent: dict[str, Any] | None, error: str) -> None:
    async with ctx.transaction() as uow:
        row = await uow.session.get(AttestationAnchor, anchor_id, with_for_update=True)
        if row is None:
            return
        row.updated_at = now_ms()
        if sent is None:
            row.error = error
            if row.status != "submitted":  # a failed confirmation check is simply asked again
                row.attempts += 1
                row.status = "retrying" if row.attempts < ATTEMPTS else "failed"
            return
        row.proof, row.error = json.dumps(sent, separators=(",", ":")), ""
        if "block" in sent:
            row.status = "confirmed"
            await confirm_day(uow.session, row.day)
            return
        row.attempts += 1
        row.status = "submitted"
        attestation = await uow.session.get(Attestation, row.day, with_for_update=True)
        if attestation is not None and attestation.status == "queued":
            attestation.status, attestation.anchored_at = "anchored", row.updated_at
