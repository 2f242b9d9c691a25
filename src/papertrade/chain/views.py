"""What the public chain endpoints and the verifier read: a portfolio's status, its published
chain, a day's root with its anchors, and the inclusion proof of one event."""

import base64
import json
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.chain import anchor
from papertrade.chain.attest import day_leaves
from papertrade.chain.proofs import GENESIS, inclusion_path, leaf_hash
from papertrade.errors import NotFound
from papertrade.models import Attestation, AttestationAnchor, ChainEntry, ChainHead

ATTESTED = ("anchored", "confirmed")  # a calendar holds the root; or it is in a block already


async def status(session: AsyncSession, portfolio_id: int) -> dict[str, Any]:
    """How far the portfolio's chain is covered by anchored roots ("verified through <day>")."""
    head = await session.get(ChainHead, portfolio_id)
    head_seq = head.seq if head is not None else 0
    attested = (
        await session.execute(
            select(func.max(ChainEntry.seq), func.max(ChainEntry.day))
            .join(Attestation, Attestation.day == ChainEntry.day)
            .where(ChainEntry.portfolio_id == portfolio_id, Attestation.status.in_(ATTESTED))
        )
    ).one()
    attested_seq = int(attested[0] or 0)
    verified_through: str | None = await session.scalar(
        select(func.max(Attestation.day)).where(Attestation.status.in_(ATTESTED))
    )
    if head_seq == 0:
        state = "empty"
    elif attested_seq >= head_seq:
        state = "verified"
    else:
        state = "pending"  # the newest events wait for their day's root
    return {
        "status": state,
        "head_seq": head_seq,
        "head_hash": head.hash if head is not None else GENESIS,
        "attested_seq": attested_seq,
        "verified_through": verified_through if attested_seq else None,
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
    digest = bytes.fromhex(attestation.root)
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
    ots = anchor.ots_file(bytes.fromhex(attestation.root), proofs) if proofs else None
    return {
        "day": attestation.day,
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
    attestation = await session.get(Attestation, day)
    if attestation is None:
        raise NotFound(f"No root for {day}.", code="attestation_not_found")
    return attestation


async def proof(session: AsyncSession, entry: ChainEntry) -> dict[str, Any]:
    """Event → leaf → path → root: everything a verifier needs for one event."""
    attestation = await session.get(Attestation, entry.day)
    if attestation is None:
        raise NotFound(
            f"The event's day ({entry.day}) has no root yet; roots are taken after the UTC day.",
            code="attestation_pending",
        )
    leaves = await day_leaves(session, entry.day)
    index = leaves.keys.index((entry.portfolio_id, entry.seq))
    path = inclusion_path([leaf_hash(h) for h in leaves.hashes], index)
    return {
        "entry": entry_view(entry),
        "leaf_index": index,
        "tree_size": len(leaves.hashes),
        "path": [node.hex() for node in path],
        "root": await root_view(session, attestation),
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
