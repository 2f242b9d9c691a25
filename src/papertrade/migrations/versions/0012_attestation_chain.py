"""attestation: per-portfolio hash chains, daily Merkle roots and their anchors

Revision ID: 0012
Revises: 0011

New tables only (docs/attestation.md): chain_heads, chain_entries, attestations,
attestation_anchors. Nothing existing moves; the chain starts with the fills and ledger rows the
consumer or the daily job next reads, from each portfolio's first.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "chain_heads",
        sa.Column("portfolio_id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("last_fill_id", sa.BigInteger(), nullable=False),
        sa.Column("last_ledger_id", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("portfolio_id", name=op.f("pk_chain_heads")),
    )
    op.create_table(
        "chain_entries",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("portfolio_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("source", sa.String(10), nullable=False),
        sa.Column("source_id", sa.BigInteger(), nullable=False),
        sa.Column("ts", sa.BigInteger(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chain_entries")),
        sa.UniqueConstraint("portfolio_id", "seq", name="uq_chain_entries_portfolio_seq"),
        sa.UniqueConstraint("source", "source_id", name="uq_chain_entries_source"),
    )
    op.create_index("ix_chain_entries_day", "chain_entries", ["day", "portfolio_id", "seq", "hash"])
    op.create_table(
        "attestations",
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("root", sa.String(64), nullable=False),
        sa.Column("leaf_count", sa.BigInteger(), nullable=False),
        sa.Column("ranges", sa.Text(), nullable=False),
        sa.Column("signature", sa.String(128), nullable=False),
        sa.Column("public_key", sa.String(64), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("anchored_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("day", name=op.f("pk_attestations")),
    )
    op.create_table(
        "attestation_anchors",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("calendar", sa.String(300), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("proof", sa.Text(), nullable=True),
        sa.Column("error", sa.String(300), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["day"],
            ["attestations.day"],
            name=op.f("fk_attestation_anchors_day_attestations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_attestation_anchors")),
        sa.UniqueConstraint("day", "calendar", name="uq_attestation_anchors_day"),
    )


def downgrade() -> None:
    op.drop_table("attestation_anchors")
    op.drop_table("attestations")
    op.drop_index("ix_chain_entries_day", table_name="chain_entries")
    op.drop_table("chain_entries")
    op.drop_table("chain_heads")
