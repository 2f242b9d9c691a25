"""sessions remember the device they were opened from (a keyed hash), for new-device notices

Revision ID: 0017_session_device
Revises: 0017_strategy_subscriptions

Sessions opened before this release have none: a user's first session with a device hash is
their baseline, so nobody is told of a "new device" just for upgrading.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_session_device"
down_revision: str | None = "0017_strategy_subscriptions"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("user_sessions", sa.Column("device_hash", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("user_sessions") as batch_op:
        batch_op.drop_column("device_hash")
