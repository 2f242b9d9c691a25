"""Responses of /v1/chain (all public reads; a private portfolio's only to its owner)."""

from pydantic import BaseModel


class ChainStatus(BaseModel):
    portfolio: str  # its code
    status: str  # empty | pending | verified
    head_seq: int
    head_hash: str
    attested_seq: int
    verified_through: str | None


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
    day: str
    root: str
    leaf_count: int
    ranges: dict[str, list[int]]  # portfolio id → [first seq, last seq]
    signature: str
    public_key: str
    status: str  # queued | anchored
    sealed_at: int
    anchored_at: int | None
    anchors: list[Anchor]
    ots: str | None  # the standard .ots file, base64


class RootPage(BaseModel):
    items: list[Root]


class InclusionProof(BaseModel):
    portfolio: str
    entry: ChainEvent
    leaf_index: int
    tree_size: int
    path: list[str]
    root: Root


class AttestationKey(BaseModel):
    algorithm: str
    public_key: str
    statement: str
