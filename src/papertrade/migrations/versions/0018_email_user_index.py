"""an index on email_messages (user_id, created_at): each notification mail counts its user's
mail of the last hour (the B4 hourly limit), and a user's mail history is listed by it

Revision ID: 0018_email_user_index
Revises: 0017_session_device
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018_email_user_index"
down_revision: str | None = "0017_session_device"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_email_messages_user_created", "email_messages", ["user_id", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_email_messages_user_created", table_name="email_messages")
