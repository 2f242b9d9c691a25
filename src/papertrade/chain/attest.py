"""Sealing finished UTC days: the day's Merkle root over its chain entries (leaves in
(portfolio_id, seq) order), signed with the attestation key, put on the signing queue; then
anchored with the OpenTimestamps calendars, outside any database transaction."""

import json
from dataclasses import dataclass

import httpx
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.chain import anchor, claims
from papertrade.chain.proofs import (
    NO_ROOT,
    cutoff_key,
    is_day_key,
    leaf_hash,
    merkle_root,
    statement,
    statement_hash,
    statement_v2,
)
from papertrade.chain.service import catch_up_all, last_sealed_day
from papertrade.chain.signing import public_hex
from papertrade.context import AppContext
from papertrade.kit import tls
from papertrade.kit.time import now_ms
from papertrade.models import Attestation, AttestationAnchor, ChainEntry
from papertrade.models.portfolio import code_of

ANCHOR_ATTEMPTS = 10  # per calendar, one per run of the job; then it stays failed
CALENDAR_TIMEOUT_S = 10.0


ANCHOR_BATCH_MS = 86_400_000  # one root a day goes to the anchors; it chains to the others


@dataclass(frozen=True, slots=True)
class DayLeaves:
    hashes: list[str]  # event hashes in leaf order
    keys: list[tuple[int, int]]  # (portfolio_id, seq) of each leaf


async def previous_key(session: AsyncSession, key: str) -> str | None:
    found: str | None = await session.scalar(
        select(func.max(Attestation.day)).where(Attestation.day < key)
    )
    return found


async def day_leaves(session: AsyncSession, day: str, after: str | None = None) -> DayLeaves:
    """The leaves of the root `day`: a PTA1 day's entries in (portfolio_id, seq) order, or a
    period root's entries with a key after `after` (the previous root's) and up to `day`, in
    (key, portfolio_id, seq) order."""
    query = select(ChainEntry.portfolio_id, ChainEntry.seq, ChainEntry.hash)
    if is_day_key(day):
        query = query.where(ChainEntry.day == day).order_by(ChainEntry.portfolio_id, ChainEntry.seq)
    else:
        query = query.where(ChainEntry.day <= day)
        if after is not None:
            query = query.where(ChainEntry.day > after)
        query = query.order_by(ChainEntry.day, ChainEntry.portfolio_id, ChainEntry.seq)
    hashes: list[str] = []
    keys: list[tuple[int, int]] = []
    for portfolio_id, seq, digest in await session.execute(query):
        hashes.append(digest)
        keys.append((portfolio_id, seq))
    return DayLeaves(hashes, keys)


async def root_leaves(session: AsyncSession, attestation: Attestation) -> DayLeaves:
    after = None if is_day_key(attestation.day) else await previous_key(session, attestation.day)
    return await day_leaves(session, attestation.day, after)


def _ranges(leaves: DayLeaves) -> dict[int, tuple[int, int, str]]:
    ranges: dict[int, tuple[int, int, str]] = {}
    for (portfolio_id, seq), digest in zip(leaves.keys, leaves.hashes, strict=True):
        first = ranges[portfolio_id][0] if portfolio_id in ranges else seq
        ranges[portfolio_id] = (first, seq, digest)
    return ranges


def signed_statement(attestation: Attestation) -> bytes:
    """The exact bytes the root's signature covers (PTA2, or PTA1 for an earlier release's)."""
    if attestation.statement is not None:
        return attestation.statement.encode()
    return statement(attestation.day, attestation.root, attestation.leaf_count)


def anchor_digest(day: str, root: str, leaf_count: int, signed: str | None) -> bytes:
    """What the anchors hold: a PTA2 root's statement hash (it names the previous root, so
    one anchored root anchors every root before it); a PTA1 root's Merkle root."""
    if signed is None:
        return bytes.fromhex(root)
    return bytes.fromhex(statement_hash(signed.encode()))


async def seal_period(
    session: AsyncSession,
    key: str,
    signing_key: Ed25519PrivateKey,
    calendars: list[str],
    now: int,
) -> Attestation:
    """Take the root `key`: every entry after the previous root and up to `key`."""
    previous = await session.scalar(
        select(Attestation).where(Attestation.day < key).order_by(Attestation.day.desc()).limit(1)
    )
    leaves = await day_leaves(session, key, previous.day if previous is not None else None)
    root = merkle_root([leaf_hash(h) for h in leaves.hashes]).hex()
    ranges = _ranges(leaves)
    prev = statement_hash(signed_statement(previous)) if previous is not None else NO_ROOT
    signed = statement_v2(
        key,
        root,
        len(leaves.hashes),
        prev,
        [(code_of(pid), first, last, head) for pid, (first, last, head) in sorted(ranges.items())],
    )
    last_anchored = await session.scalar(
        select(func.max(Attestation.created_at)).where(Attestation.status != "signed")
    )
    anchored = last_anchored is None or now - last_anchored >= ANCHOR_BATCH_MS
    attestation = Attestation(
        day=key,
        root=root,
        leaf_count=len(leaves.hashes),
        ranges=json.dumps(
            {str(pid): [first, last] for pid, (first, last, _h) in ranges.items()},
            separators=(",", ":"),
        ),
        statement=signed.decode(),
        signature=signing_key.sign(signed).hex(),
        public_key=public_hex(signing_key),
        status="queued" if anchored else "signed",
        created_at=now,
    )
    session.add(attestation)
    if anchored:
        for calendar in calendars:
            session.add(
                AttestationAnchor(day=key, calendar=calendar, status="queued", error="", attempts=0)
            )
    return attestation


async def seal_finished_days(
    session: AsyncSession,
    key: Ed25519PrivateKey,
    calendars: list[str],
    now: int,
    every_s: int = 3600,
) -> list[str]:
    """Chain what is not chained yet, then take the root of the last finished period of
    `every_s` seconds when it has entries no root covers yet; returns the keys sealed."""
    await catch_up_all(session)
    cutoff = cutoff_key(now, every_s)
    sealed = await last_sealed_day(session)
    if sealed is not None and sealed >= cutoff:
        return []
    waiting = select(ChainEntry.id).where(ChainEntry.day <= cutoff)
    if sealed is not None:
        waiting = waiting.where(ChainEntry.day > sealed)
    if await session.scalar(waiting.limit(1)) is None:
        return []
    await seal_period(session, cutoff, key, calendars, now)
    return [cutoff]


async def anchor_queued(ctx: AppContext) -> dict[str, int]:
    """Submit every queued root to the calendars that have not taken it yet; an attestation is
    anchored once one calendar holds it. Network calls happen between short transactions."""
    async with ctx.db.reader() as session:
        waiting = (
            await session.execute(
                select(
                    AttestationAnchor.id,
                    AttestationAnchor.calendar,
                    Attestation.day,
                    Attestation.root,
                    Attestation.leaf_count,
                    Attestation.statement,
                )
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
    async with httpx.AsyncClient(timeout=CALENDAR_TIMEOUT_S, verify=tls.client_context()) as client:
        for anchor_id, calendar, day, root, leaf_count, signed in waiting:
            if not await claims.claim(ctx, anchor_id):
                continue  # another run is submitting it
            try:
                digest = anchor_digest(day, root, leaf_count, signed)
                proof: bytes | None = await anchor.submit(client, calendar, digest)
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
