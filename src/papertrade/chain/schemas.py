"""Responses of /v1/chain (all public reads; a private portfolio's only to its owner)."""

from pydantic import BaseModel


class ChainStatus(BaseModel):
    portfolio: str  # its code
    status: str  # empty | pending | verified
    head_seq: int
    head_hash: str
    attested_seq: int
    verified_through: str | None  # the UTC day of the newest event an anchored root covers
    signed_seq: int  # the newest event a signed root covers
    signed_through: str | None  # that root's period end, "2026-11-28 14:00 UTC"
    signed_root: str | None  # that root's key


class ChainEvent(BaseModel):
    seq: int
    day: str
    ref: str  # fill:<id> | ledger:<id>
    event: str  # the canonical JSON that was hashed, byte for byte
    hash: str


class ChainEvents(BaseModel):
    portfolio: str
    items: list[ChainEvent]


class Anchor(BaseModel):
    calendar: str
    status: str  # queued | retrying | sending (TRON) | submitted | confirmed | failed
    attempts: int
    error: str | None
    proof: str | None  # the calendar's answer, hex
    attestations: list[str]


class Root(BaseModel):
    day: str  # its key: the last second it covers (a whole day for a PTA1 root)
    format: str  # PTA2 | PTA1 (the daily roots of earlier releases)
    through: str  # the end of the period it covers, "2026-11-28 14:00 UTC"
    statement: str  # the exact text the signature covers
    statement_hash: str  # SHA-256 of it: the next root's `prev`, and what is anchored (PTA2)
    root: str
    leaf_count: int
    ranges: dict[str, list[int]]  # portfolio id → [first seq, last seq]
    signature: str
    public_key: str
    status: str  # signed (anchored through a later root) | queued | anchored | confirmed
    sealed_at: int
    anchored_at: int | None
    anchors: list[Anchor]
    ots: str | None  # the standard .ots file, base64


class RootPage(BaseModel):
    items: list[Root]


class InclusionProof(BaseModel):
    portfolio: str
    entry: ChainEvent
    head_seq: int  # the portfolio's newest event
    leaf_index: int | None  # null until the event's root is taken
    tree_size: int | None
    path: list[str]
    root: Root | None
    root_due: str | None  # when its root is due, while there is none


class AttestationKey(BaseModel):
    algorithm: str
    public_key: str
    statement: str
