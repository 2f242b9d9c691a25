"""The attested track record: each portfolio's hash chain, the daily Merkle roots and their
anchors (docs/attestation.md). Rows are only ever added; a correction is a new entry."""

from sqlalchemy import BigInteger, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base
from papertrade.models.base import created_at_column


class ChainHead(Base):
    """Where a portfolio's chain ends, and how far into its fills and ledger it has read."""

    __tablename__ = "chain_heads"

    portfolio_id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    seq: Mapped[int] = mapped_column(BigInteger, default=0)
    hash: Mapped[str] = mapped_column(String(64))
    last_fill_id: Mapped[int] = mapped_column(BigInteger, default=0)
    last_ledger_id: Mapped[int] = mapped_column(BigInteger, default=0)
    # The key of the portfolio's newest entry: the next one's is never earlier (a root holds
    # one unbroken range of each portfolio's chain).
    period: Mapped[str] = mapped_column(String(20), default="", server_default="")


class ChainEntry(Base):
    """One event of a portfolio's chain: its canonical JSON (prev_hash included) and its hash."""

    __tablename__ = "chain_entries"
    __table_args__ = (
        UniqueConstraint("portfolio_id", "seq", name="uq_chain_entries_portfolio_seq"),
        UniqueConstraint("source", "source_id", name="uq_chain_entries_source"),
        # Covering the day's leaves: the daily root reads the index alone, in leaf order.
        Index("ix_chain_entries_day", "day", "portfolio_id", "seq", "hash"),
    )

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True
    )
    portfolio_id: Mapped[int] = mapped_column(Integer)
    seq: Mapped[int] = mapped_column(BigInteger)
    # Its key: the UTC second ("2026-11-28T13:59:59Z"; a day on entries of the daily roots of
    # earlier releases); the first root whose key is at or after it covers it.
    day: Mapped[str] = mapped_column(String(20))
    source: Mapped[str] = mapped_column(String(10))  # fill | ledger
    source_id: Mapped[int] = mapped_column(BigInteger)
    ts: Mapped[int] = mapped_column(BigInteger)
    body: Mapped[str] = mapped_column(Text)  # the canonical JSON that was hashed
    hash: Mapped[str] = mapped_column(String(64))


class Attestation(Base):
    """A root: the Merkle root over every chain entry after the previous root's key and up to
    its own (`day`: the period's last second, or a whole day for the daily PTA1 roots of earlier
    releases), signed and anchored."""

    __tablename__ = "attestations"

    day: Mapped[str] = mapped_column(String(20), primary_key=True)
    root: Mapped[str] = mapped_column(String(64))
    leaf_count: Mapped[int] = mapped_column(BigInteger)
    ranges: Mapped[str] = mapped_column(Text)  # JSON {portfolio_id: [first_seq, last_seq]}
    # The signed PTA2 statement (proofs.statement_v2); NULL on the PTA1 roots of earlier
    # releases, whose signature covers PTA1:<day>:<root>:<leaf count> only.
    statement: Mapped[str | None] = mapped_column(Text, default=None)
    signature: Mapped[str] = mapped_column(String(128))
    public_key: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(12))  # signed | queued | anchored | confirmed
    created_at: Mapped[int] = created_at_column()
    anchored_at: Mapped[int | None] = mapped_column(BigInteger, default=None)


class AttestationAnchor(Base):
    """The root's submission to one OpenTimestamps calendar: its proof once the calendar took it."""

    __tablename__ = "attestation_anchors"
    __table_args__ = (UniqueConstraint("day", "calendar", name="uq_attestation_anchors_day"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    day: Mapped[str] = mapped_column(String(20), ForeignKey("attestations.day", ondelete="CASCADE"))
    calendar: Mapped[str] = mapped_column(String(300))
    status: Mapped[str] = mapped_column(String(12))  # pending | failed | (future) confirmed
    proof: Mapped[str | None] = mapped_column(Text, default=None)  # the calendar's answer, hex
    error: Mapped[str] = mapped_column(String(300), default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[int] = created_at_column()
