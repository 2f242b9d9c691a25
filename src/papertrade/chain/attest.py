"""Sealing finished UTC days: the day's Merkle root over its chain entries (leaves in
(portfolio_id, seq) order), signed with the attestation key, put on the signing queue; then
anchored with the OpenTimestamps calendars, outside any database transaction."""

import json
from dataclasses import dataclass
from datetime import date

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.chain import anchor, claims
from papertrade.chain.proofs import leaf_hash, merkle_root, statement, utc_day
from papertrade.chain.service import catch_up_all, last_sealed_day
from papertrade.chain.signing import public_hex
from papertrade.context import AppContext
from papertrade.kit.time import now_ms
from papertrade.models import Attestation, AttestationAnchor, ChainEntry

ANCHOR_ATTEMPTS = 10  # per calendar, one per run of the job; then it stays failed
CALENDAR_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class DayLeaves:
    hashes: list[str]  # event hashes in leaf order
    keys: list[tuple[int, int]]  # (portfolio_id, seq) of each leaf


async def day_leaves(session: AsyncSession, day: str) -> DayLeaves:
    rows = await session.execute(
        select(ChainEntry.portfolio_id, ChainEntry.seq, ChainEntry.hash)
        .where(ChainEntry.day == day)
        .order_by(ChainEntry.portfolio_id, ChainEntry.seq)
    )
    hashes: list[str] = []
    keys: list[tuple[int, int]] = []
    for portfolio_id, seq, digest in rows:
        hashes.append(digest)
        keys.append((portfolio_id, seq))
    return DayLeaves(hashes, keys)


def _ranges(keys: list[tuple[int, int]]) -> dict[str, list[int]]:
    ranges: dict[str, list[int]] = {}
    for portfolio_id, seq in keys:
        first_last = ranges.setdefault(str(portfolio_id), [seq, seq])
        first_last[1] = seq
    return ranges


async def seal_day(
    session: AsyncSession, day: str, key: Ed25519PrivateKey, calendars: list[str]
) -> Attestation:
    leaves = await day_leaves(session, day)
    root = merkle_root([leaf_hash(h) for h in leaves.hashes]).hex()
    attestation = Attestation(
        day=day,
        root=root,
        leaf_count=len(leaves.hashes),
        ranges=json.dumps(_ranges(leaves.keys), separators=(",", ":")),
        signature=key.sign(statement(day, root, len(leaves.hashes))).hex(),
        public_key=public_hex(key),
        status="queued",
    )
    session.add(attestation)
    for calendar in calendars:
        session.add(
            AttestationAnchor(day=day, calendar=calendar, status="queued", error="", attempts=0)
        )
    return attestation


async def seal_finished_days(
    session: AsyncSession, key: Ed25519PrivateKey, calendars: list[str], now: int
) -> list[str]:
    """Chain what is not chained yet, then seal every finished day that has entries and no
    root; returns the days sealed."""
    await catch_up_all(session)
    today = utc_day(now)
    sealed = await last_sealed_day(session)
    query = select(ChainEntry.day).where(ChainEntry.day < today).distinct()
    if sealed is not None:
        query = query.where(ChainEntry.day > sealed)
    days = sorted((await session.scalars(query)).all())
    for day in days:
        date.fromisoformat(day)  # a malformed day would be a bug: fail before signing it
        await seal_day(session, day, key, calendars)
    return days


async def anchor_queued(ctx: AppContext) -> dict[str, int]:
    """Submit every queued root to the calendars that have not taken it yet; an attestation is
    anchored once one calendar holds it. Network calls happen between short transactions."""
    async with ctx.db.reader() as session:
        waiting = (
            await session.execute(
                select(AttestationAnchor.id, AttestationAnchor.calendar, Attestation.root)
                .join(Attestation, Attestation.day == AttestationAnchor.day)
                .where(
                    claims.claimable(),
                    AttestationAnchor.attempts < ANCHOR_ATTEMPTS,
                    AttestationAnchor.calendar.not_like("tron:%"),  # chain/tron.py sends those
                )
                .order_by(AttestationAnchor.id)
            )
        ).all()
    counts = {"submitted": 0, "failed": 0}
    async with httpx.AsyncClient(timeout=CALENDAR_TIMEOUT_S) as client:
        for anchor_id, calendar, root in waiting:
            if not await claims.claim(ctx, anchor_id):
                continue  # another run is submitting it
            try:
                proof: bytes | None = await anchor.submit(client, calendar, bytes.fromhex(root))
                error = ""
            except anchor.AnchorError as exc:
                proof, error = None, str(exc)[:300]
            await _record(ctx, anchor_id, proof, error)
            counts["submitted" if proof is not None else "failed"] += 1
    return counts


async def _record(ctx: AppContext, anchor_id: int, proof: bytes | None, error: str) -> None:
    async with ctx.transaction() as uow:
        row = await uow.session.get(AttestationAnchor, anchor_id, with_for_update=True)
        if row is None or row.status in ("submitted", "confirmed"):
            return
        row.attempts += 1
        row.updated_at = now_ms()
        if proof is None:
            row.status = "retrying" if row.attempts < ANCHOR_ATTEMPTS else "failed"
            row.error = error
            return
        row.status, row.proof, row.error = "submitted", proof.hex(), ""
        attestation = await uow.session.get(Attestation, row.day, with_for_update=True)
        if attestation is not None and attestation.status == "queued":
            attestation.status, attestation.anchored_at = "anchored", row.updated_at
