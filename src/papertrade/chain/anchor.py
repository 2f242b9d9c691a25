"""Anchoring a root with OpenTimestamps: the root goes to each calendar over its HTTP protocol
(POST <calendar>/digest, 32 raw bytes; the answer is a serialized timestamp whose operations
lead from our digest to a commitment the calendar will put in a Bitcoin transaction). The
answer is checked and kept; `ots_file` makes the standard `.ots` file anyone can upgrade and
verify with the OpenTimestamps client.

Calendars are set by the operator (ots_calendars), not by users.
"""

import httpx
from opentimestamps.core.notary import BitcoinBlockHeaderAttestation, PendingAttestation
from opentimestamps.core.op import OpSHA256
from opentimestamps.core.serialize import (
    BytesDeserializationContext,
    BytesSerializationContext,
    DeserializationError,
)
from opentimestamps.core.timestamp import DetachedTimestampFile, Timestamp

MAX_ANSWER_BYTES = 10_000  # what the reference client accepts
HEADERS = {"Accept": "application/vnd.opentimestamps.v1", "User-Agent": "papertrade"}


class AnchorError(Exception):
    """A calendar refused the root or answered something that is not a proof for it."""


def _timestamp(digest: bytes, proof: bytes) -> Timestamp:
    try:
        return Timestamp.deserialize(BytesDeserializationContext(proof), digest)
    except (DeserializationError, ValueError, TypeError) as exc:
        raise AnchorError(f"not an OpenTimestamps proof: {exc}") from exc


def attestations(digest: bytes, proof: bytes) -> list[str]:
    """What the proof says about `digest`: each attestation it leads to, e.g.
    `pending:https://a.pool.opentimestamps.org` or `bitcoin:871234` (a block height). Raises
    AnchorError when the bytes are not a proof that starts from `digest`."""
    found: list[str] = []
    for _message, attestation in _timestamp(digest, proof).all_attestations():
        if isinstance(attestation, PendingAttestation):
            found.append(f"pending:{attestation.uri}")
        elif isinstance(attestation, BitcoinBlockHeaderAttestation):
            found.append(f"bitcoin:{attestation.height}")
        else:
            found.append(f"other:{type(attestation).__name__}")
    if not found:
        raise AnchorError("the proof leads to no attestation")
    return found


async def submit(client: httpx.AsyncClient, calendar: str, digest: bytes) -> bytes:
    """Submit `digest` to one calendar; its proof (checked to start from `digest`)."""
    try:
        answer = await client.post(
            f"{calendar.rstrip('/')}/digest", content=digest, headers=HEADERS
        )
    except httpx.HTTPError as exc:
        raise AnchorError(f"{type(exc).__name__}: {exc}") from exc
    if answer.status_code != 200:
        raise AnchorError(f"the calendar answered HTTP {answer.status_code}")
    if len(answer.content) > MAX_ANSWER_BYTES:
        raise AnchorError("the calendar's answer is too long")
    attestations(digest, answer.content)
    return answer.content


def ots_file(digest: bytes, proofs: list[bytes]) -> bytes:
    """The standard detached `.ots` file for a digest, merging every calendar's proof."""
    timestamp = Timestamp(digest)
    for proof in proofs:
        timestamp.merge(_timestamp(digest, proof))
    out = BytesSerializationContext()
    DetachedTimestampFile(OpSHA256(), timestamp).serialize(out)
    return bytes(out.getbytes())
