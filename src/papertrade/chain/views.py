"""What the public chain endpoints and the verifier read: a portfolio's status, its published
chain, a day's root with its anchors, and the inclusion proof of one event."""

import base64
import json
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.chain import anchor
from papertrade.chain.attest import anchor_digest, root_leaves, signed_statement
from papertrade.chain.proofs import (
    GENESIS,
    inclusion_path,
    is_day_key,
    iso_ms,
    key_end_ms,
    leaf_hash,
    period_label,
    statement_hash,
    utc_day,
)
from papertrade.errors import NotFound
from papertrade.models import Attestation, AttestationAnchor, ChainEntry, ChainHead

ATTESTED = ("anchored", "confirmed")  # a calendar holds the root; or it is in a block already


async def status(session: AsyncSession, portfolio_id: int) -> dict[str, Any]:
    """How far the portfolio's chain is covered by signed roots, and by anchored ones ("verified
    through <day>": the UTC day of the newest event an anchored root covers)."""
    head = await session.get(ChainHead, portfolio_id)
    head_seq = head.seq if head is not None else 0
    signed_key: str | None = await session.scalar(select(func.max(Attestation.day)))
    anchored_key: str | None = await session.scalar(
        select(func.max(Attestation.day)).where(Attestation.status.in_(ATTESTED))
    )

    async def covered(key: str | None) -> tuple[int, int]:
        if key is None:
            return 0, 0
        found = (
            await session.execute(
                select(ChainEntry.seq, ChainEntry.ts)
                .where(ChainEntry.portfolio_id == portfolio_id, ChainEntry.day <= key)
                .order_by(ChainEntry.seq.desc())
                .limit(1)
            )
        ).first()
        return (int(found[0]), int(found[1])) if found else (0, 0)

    signed_seq, _ts = await covered(signed_key)
    attested_seq, attested_ts = await covered(anchored_key)
    if head_seq == 0:
        state = "empty"
    elif attested_seq >= head_seq:
        state = "verified"
    else:
        state = "pending"  # the newest events wait for an anchored root
    return {
        "status": state,
        "head_seq": head_seq,
        "head_hash": head.hash if head is not None else GENESIS,
        "attested_seq": attested_seq,
        "verified_through": utc_day(attested_ts) if attested_seq else None,
        "signed_seq": signed_seq,
        "signed_through": period_label(signed_key) if signed_seq and signed_key else None,
        "signed_root": signed_key if signed_seq else None,
    }


def entry_view(entry: ChainEntry) -> dict[str, Any]:
    return {
        "seq": entry.seq,
        "day": entry.day,
        "ref": f"{entry.source}:{entry.source_id}",
        "event": entry.body,  # the exact canonical JSON that was hashed
        "hash": entry.hash,
    }


async def entries(
    session: AsyncSession, portfolio_id: int, after_seq: int, limit: int
) -> list[dict[str, Any]]:
    rows = await session.scalars(
        select(ChainEntry)
        .where(ChainEntry.portfolio_id == portfolio_id, ChainEntry.seq > after_seq)
        .order_by(ChainEntry.seq)
        .limit(limit)
    )
    return [entry_view(e) for e in rows]


async def anchors(session: AsyncSession, attestation: Attestation) -> list[dict[str, Any]]:
    rows = await session.scalars(
        select(AttestationAnchor)
        .where(AttestationAnchor.day == attestation.day)
        .order_by(AttestationAnchor.id)
    )
    digest = anchor_digest(
        attestation.day, attestation.root, attestation.leaf_count, attestation.statement
    )
    found = []
    for row in rows:
        if row.calendar.startswith("tron:"):  # a memo transaction: its id (and block)
            found.append(tron_view(row))
            continue
        proof = bytes.fromhex(row.proof) if row.proof else None
        try:
            attested = anchor.attestations(digest, proof) if proof else []
        except anchor.AnchorError as exc:  # a stored proof that no longer parses: say so
            attested = [f"invalid: {exc}"]
        found.append(
            {
                "calendar": row.calendar,
                "status": row.status,
                "attempts": row.attempts,
                "error": row.error or None,
                "proof": proof.hex() if proof else None,
                "attestations": attested,
            }
        )
    return found


def tron_view(row: AttestationAnchor) -> dict[str, Any]:
    sent = json.loads(row.proof) if row.proof else {}
    attested = [f"tron:{sent['txid']}"] if sent.get("txid") else []
    if sent.get("block") is not None:
        attested.append(f"tron-block:{sent['block']}")
    return {
        "calendar": row.calendar,
        "status": row.status,
        "attempts": row.attempts,
        "error": row.error or None,
        "proof": row.proof,
        "attestations": attested,
    }


async def root_view(session: AsyncSession, attestation: Attestation) -> dict[str, Any]:
    anchored = await anchors(session, attestation)
    proofs = [
        bytes.fromhex(a["proof"])
        for a in anchored
        if a["proof"]
        and not a["calendar"].startswith("tron:")
        and not a["attestations"][0].startswith("invalid")
    ]
    digest = anchor_digest(
        attestation.day, attestation.root, attestation.leaf_count, attestation.statement
    )
    ots = anchor.ots_file(digest, proofs) if proofs else None
    return {
        "day": attestation.day,
        "format": "PTA1" if attestation.statement is None else "PTA2",
        "through": period_label(attestation.day),
        "statement": signed_statement(attestation).decode(),
        "statement_hash": statement_hash(signed_statement(attestation)),
        "root": attestation.root,
        "leaf_count": attestation.leaf_count,
        "ranges": json.loads(attestation.ranges),
        "signature": attestation.signature,
        "public_key": attestation.public_key,
        "status": attestation.status,
        "sealed_at": attestation.created_at,
        "anchored_at": attestation.anchored_at,
        "anchors": anchored,
        "ots": base64.b64encode(ots).decode() if ots else None,
    }


async def get_root(session: AsyncSession, day: str) -> Attestation:
    """The root with that key; for a bare day, the newest root of that day."""
    attestation = await session.get(Attestation, day)
    if attestation is None and is_day_key(day):
        attestation = await session.scalar(
            select(Attestation)
            .where(Attestation.day > day, Attestation.day < day + "U")
            .order_by(Attestation.day.desc())
            .limit(1)
        )
    if attestation is None:
        raise NotFound(f"No root for {day}.", code="attestation_not_found")
    return attestation


async def covering_root(session: AsyncSession, entry: ChainEntry) -> Attestation | None:
    """The root that covers the entry: the first whose key is at or after the entry's."""
    attestation: Attestation | None = await session.scalar(
        select(Attestation).where(Attestation.day >= entry.day).order_by(Attestation.day).limit(1)
    )
    return attestation


async def proof(
    session: AsyncSession, entry: ChainEntry, every_s: int, head_seq: int
) -> dict[str, Any]:
    """Event → leaf → path → root: everything a verifier needs for one event. Before its root
    is taken: the event, its hash and place in the chain, `root: null` and when it is due."""
    attestation = await covering_root(session, entry)
    if attestation is None:
        every_ms = max(1, every_s) * 1000  # its root closes the period its key falls in
        due = (key_end_ms(entry.day) - 1) // every_ms * every_ms + every_ms
        return {
            "entry": entry_view(entry),
            "head_seq": head_seq,
            "leaf_index": None,
            "tree_size": None,
            "path": [],
            "root": None,
            "root_due": iso_ms(due),
        }
    leaves = await root_leaves(session, attestation)
    index = leaves.keys.index((entry.portfolio_id, entry.seq))
    path = inclusion_path([leaf_hash(h) for h in leaves.hashes], index)
    return {
        "entry": entry_view(entry),
        "head_seq": head_seq,
        "leaf_index": index,
        "tree_size": len(leaves.hashes),
        "path": [node.hex() for node in path],
        "root": await root_view(session, attestation),
        "root_due": None,
    }


async def entry_by_seq(session: AsyncSession, portfolio_id: int, seq: int) -> ChainEntry:
    entry = await session.scalar(
        select(ChainEntry).where(ChainEntry.portfolio_id == portfolio_id, ChainEntry.seq == seq)
    )
    if entry is None:
        raise NotFound("No such event in the portfolio's chain.", code="chain_event_not_found")
    return entry


async def entry_by_fill(session: AsyncSession, portfolio_id: int, fill_id: int) -> ChainEntry:
    entry = await session.scalar(
        select(ChainEntry).where(
            ChainEntry.source == "fill",
            ChainEntry.source_id == fill_id,
            ChainEntry.portfolio_id == portfolio_id,
        )
    )
    if entry is None:
        raise NotFound(
            "That fill is not in the portfolio's chain (yet).", code="chain_event_not_found"
        )
    return entry
