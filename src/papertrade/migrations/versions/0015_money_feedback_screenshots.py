"""feedback screenshots: an optional image attached to a feedback message

Revision ID: 0015_money_feedback_screenshots
Revises: 0015_live_sources_drift

A new table only: nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_money_feedback_screenshots"
down_revision: str | None = "0015_live_sources_drift"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "feedback_screenshots",
        sa.Column("feedback_id", sa.Integer(), nullable=False),
        sa.Column("png", sa.LargeBinary(), nullable=False),
        sa.Column("width", sa.Integer(), nullable=False),
        sa.Column("height", sa.Integer(), nullable=False),
        sa.Column("sent_format", sa.String(length=10), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["feedback_id"],
            ["feedback.id"],
            name=op.f("fk_feedback_screenshots_feedback_id_feedback"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("feedback_id", name=op.f("pk_feedback_screenshots")),
    )


def downgrade() -> None:
    op.drop_table("feedback_screenshots")
