"""outbox: durable domain events and the consumers' cursors

Revision ID: 0007
Revises: 0006

Events that other areas must not miss (fills, cancels, liquidations, funding, signals) are
written in the same transaction as the change that caused them; consumers read them in id order
and record how far they have read (docs/architecture.md). New tables only: nothing existing moves.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "outbox_events",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("type", sa.String(60), nullable=False),
        sa.Column("portfolio_id", sa.Integer(), nullable=True),
        sa.Column("time", sa.BigInteger(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox_events")),
    )
    op.create_index("ix_outbox_events_portfolio_id_id", "outbox_events", ["portfolio_id", "id"])
    op.create_table(
        "outbox_cursors",
        sa.Column("consumer", sa.String(60), nullable=False),
        sa.Column("last_id", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("consumer", name=op.f("pk_outbox_cursors")),
    )


def downgrade() -> None:
    op.drop_table("outbox_cursors")
    op.drop_index("ix_outbox_events_portfolio_id_id", table_name="outbox_events")
    op.drop_table("outbox_events")
