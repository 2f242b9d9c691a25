"""inbound: third-party webhook sources and their received events

Revision ID: 0010_4
Revises: 0010_3

New tables only (docs/webhooks.md, Other sources).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_4"
down_revision: str | None = "0010_3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "inbound_sources",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(20), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("note", sa.String(200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("revoked_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_inbound_sources_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbound_sources")),
    )
    op.create_index(op.f("ix_inbound_sources_user_id"), "inbound_sources", ["user_id"])
    op.create_table(
        "inbound_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("provider", sa.String(20), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=True),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("event_id", sa.String(200), nullable=False),
        sa.Column("type", sa.String(60), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.Column("processed_at", sa.BigInteger(), nullable=True),
        sa.Column("outcome", sa.String(300), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inbound_events")),
        sa.UniqueConstraint("provider", "event_id", name="uq_inbound_events_provider_event_id"),
    )
    op.create_index("ix_inbound_events_source_id_id", "inbound_events", ["source_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_inbound_events_source_id_id", table_name="inbound_events")
    op.drop_table("inbound_events")
    op.drop_index(op.f("ix_inbound_sources_user_id"), table_name="inbound_sources")
    op.drop_table("inbound_sources")
