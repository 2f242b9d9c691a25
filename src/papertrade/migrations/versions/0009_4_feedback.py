"""feedback: in-product feedback and the operators' answers

Revision ID: 0009_4
Revises: 0009_3

A new table only: nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_4"
down_revision: str | None = "0009_3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("category", sa.String(length=20), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("page", sa.String(length=300), nullable=False),
        sa.Column("app_version", sa.String(length=50), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("answered_by", sa.String(length=100), nullable=True),
        sa.Column("answered_at", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_feedback_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feedback")),
    )
    op.create_index("ix_feedback_user", "feedback", ["user_id", "id"])
    op.create_index(op.f("ix_feedback_status"), "feedback", ["status"])


def downgrade() -> None:
    op.drop_index(op.f("ix_feedback_status"), table_name="feedback")
    op.drop_index("ix_feedback_user", table_name="feedback")
    op.drop_table("feedback")
