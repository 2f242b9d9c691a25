"""Upgrading pending OpenTimestamps proofs to Bitcoin-attested ones, as `ots upgrade` does:
for each pending attestation in a stored proof, ask its calendar for the timestamp of the
commitment (GET <calendar>/timestamp/<commitment hex>); once the calendar's Bitcoin
transaction is confirmed the answer leads to a block header attestation, which is merged into
the stored proof. The anchor is then `confirmed`, and so is its day's root.

Only a calendar we submitted to (the operator's list, the row's own calendar) is asked: the
URI inside a proof comes from the calendar's answer and is never fetched as given."""

from collections.abc import Iterator

import httpx
from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
from opentimestamps.core.serialize import BytesDeserializationContext, BytesSerializationContext
from opentimestamps.core.timestamp import Timestamp
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.chain import anchor
from papertrade.chain.attest import anchor_digest
from papertrade.context import AppContext
from papertrade.kit import tls
from papertrade.kit.time import now_ms
from papertrade.models import Attestation, AttestationAnchor

CALENDAR_TIMEOUT_S = 10.0


def _pending(timestamp: Timestamp) -> Iterator[tuple[Timestamp, PendingAttestation]]:
    """Every node of the tree that carries a pending attestation."""
    for attestation in timestamp.attestations:
        if isinstance(attestation, PendingAttestation):
            yield timestamp, attestation
    for child in timestamp.ops.values():
        yield from _pending(child)


def confirmed_heights(timestamp: Timestamp) -> list[int]:
    return sorted(
        a.height
        for _msg, a in timestamp.all_attestations()
        if isinstance(a, BitcoinBlockHeaderAttestation)
    )


async def upgrade_proof(
    client: httpx.AsyncClient, calendar: str, digest: bytes, proof: bytes
) -> bytes | None:
    """The proof with the calendar's Bitcoin attestation merged in, or None while pending."""
    timestamp = Timestamp.deserialize(BytesDeserializationContext(proof), digest)
    upgraded = False
    for node, _attestation in list(_pending(timestamp)):
        try:
            answer = await client.get(
                f"{calendar.rstrip('/')}/timestamp/{node.msg.hex()}", headers=anchor.HEADERS
            )
        except httpx.HTTPError as exc:
            raise anchor.AnchorError(f"{type(exc).__name__}: {exc}") from exc
        if answer.status_code == 404:
            continue  # "Pending confirmation in Bitcoin blockchain"
        if answer.status_code != 200 or len(answer.content) > anchor.MAX_ANSWER_BYTES:
            raise anchor.AnchorError(f"the calendar answered HTTP {answer.status_code}")
        try:
            found = Timestamp.deserialize(BytesDeserializationContext(answer.content), node.msg)
        except Exception as exc:
            raise anchor.AnchorError(f"not an OpenTimestamps proof: {exc}") from exc
        if not confirmed_heights(found):
            continue
        node.merge(found)
        upgraded = True
    if not upgraded:
        return None
    out = BytesSerializationContext()
    timestamp.serialize(out)
    return bytes(out.getbytes())


async def upgrade_pending(ctx: AppContext) -> dict[str, int]:
    """Ask the calendars about every submitted (pending) proof; store the upgraded ones."""
    async with ctx.db.reader() as session:
        waiting = (
            await session.execute(
                select(
                    AttestationAnchor.id,
                    AttestationAnchor.calendar,
                    AttestationAnchor.proof,
                    Attestation.day,
                    Attestation.root,
                    Attestation.leaf_count,
                    Attestation.statement,
                )
                .join(Attestation, Attestation.day == AttestationAnchor.day)
                .where(
                    AttestationAnchor.status == "submitted",
                    AttestationAnchor.calendar.not_like("tron:%"),
                )
                .order_by(AttestationAnchor.id)
            )
        ).all()
    counts = {"confirmed": 0, "pending": 0, "failed": 0}
    calendars = set(ctx.settings.ots_calendars)
    async with httpx.AsyncClient(timeout=CALENDAR_TIMEOUT_S, verify=tls.client_context()) as client:
        for anchor_id, calendar, proof, day, root, leaf_count, signed in waiting:
            if calendar not in calendars or not proof:
                continue  # a calendar the operator no longer lists is not asked
            try:
                upgraded = await upgrade_proof(
                    client,
                    calendar,
                    anchor_digest(day, root, leaf_count, signed),
                    bytes.fromhex(proof),
                )
            except anchor.AnchorError as exc:
                counts["failed"] += 1
                await _note(ctx, anchor_id, None, str(exc)[:300])
                continue
            if upgraded is None:
                counts["pending"] += 1
                continue
            await _note(ctx, anchor_id, upgraded, "")
            counts["confirmed"] += 1
    return counts


async def _note(ctx: AppContext, anchor_id: int, proof: bytes | None, error: str) -> None:
    async with ctx.transaction() as uow:
        row = await uow.session.get(AttestationAnchor, anchor_id, with_for_update=True)
        if row is None or row.status != "submitted":
            return
        row.updated_at = now_ms()
        row.error = error
        if proof is None:
            return
        row.status, row.proof = "confirmed", proof.hex()
        await confirm_day(uow.session, row.day)


async def confirm_day(session: AsyncSession, day: str) -> None:
    """A day's root is confirmed once any of its anchors is (Bitcoin, or a TRON block)."""
    attestation = await session.get(Attestation, day, with_for_update=True)
    if attestation is not None and attestation.status in ("queued", "anchored"):
        attestation.status = "confirmed"
        if attestation.anchored_at is None:
            attestation.anchored_at = now_ms()
