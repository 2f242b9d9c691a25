"""live: strategies and webhook tokens as signal sources, reconciliation records

Revision ID: 0015_live_sources_drift
Revises: 0015_screen

Additive only: two nullable columns and a baseline time on live_accounts, a new table
live_reconciliations (docs/live.md), and an index to find a strategy signal by its order.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_live_sources_drift"
down_revision: str | None = "0015_screen"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("live_accounts", schema=None) as batch_op:
        batch_op.add_column(sa.Column("source_strategy_id", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("source_token_id", sa.Integer(), nullable=True))
        batch_op.add_column(
            sa.Column("baseline_at", sa.BigInteger(), nullable=False, server_default="0")
        )
    op.create_table(
        "live_reconciliations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("live_account_id", sa.Integer(), nullable=False),
        sa.Column("checked_at", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("drift", sa.Text(), nullable=False),
        sa.Column("error", sa.String(300), nullable=False),
        sa.ForeignKeyConstraint(
            ["live_account_id"],
            ["live_accounts.id"],
            name=op.f("fk_live_reconciliations_live_account_id_live_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_live_reconciliations")),
    )
    op.create_index(
        "ix_live_reconciliations_account_id", "live_reconciliations", ["live_account_id", "id"]
    )


def downgrade() -> None:
    op.drop_index("ix_live_reconciliations_account_id", table_name="live_reconciliations")
    op.drop_table("live_reconciliations")
    with op.batch_alter_table("live_accounts", schema=None) as batch_op:
        batch_op.drop_column("baseline_at")
        batch_op.drop_column("source_token_id")
        batch_op.drop_column("source_strategy_id")
