"""conditional orders name the entry they protect, and are found by the order they placed

Revision ID: 0016_conditional_origin
Revises: 0016_fill_position_side

A TP/SL attached to an entry (by /v1, a strategy or an alert) records that entry, so the order
it places when it triggers is traced to the same source as the entry (live accounts mirroring a
strategy or a webhook token). Existing conditional orders have no recorded entry (NULL).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_conditional_origin"
down_revision: str | None = "0016_fill_position_side"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("conditional_orders", sa.Column("origin_order_id", sa.BigInteger()))
    op.create_index(
        "ix_conditional_orders_actual_order_id", "conditional_orders", ["actual_order_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_conditional_orders_actual_order_id", table_name="conditional_orders")
    with op.batch_alter_table("conditional_orders") as batch_op:
        batch_op.drop_column("origin_order_id")
