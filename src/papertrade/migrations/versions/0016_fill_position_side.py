"""fills name their position side (hedge mode), and a fill history is read by portfolio

Revision ID: 0016_fill_position_side
Revises: 0015_realism_profile

Existing fills take their order's position side (BOTH for every fill made in one-way mode), so
/fapi/v1/userTrades reports the right `positionSide` for fills made before this release too.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016_fill_position_side"
down_revision: str | None = "0015_realism_profile"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "fills",
        sa.Column("position_side", sa.String(length=5), nullable=False, server_default="BOTH"),
    )
    op.execute(
        "UPDATE fills SET position_side = ("
        "SELECT orders.position_side FROM orders WHERE orders.id = fills.order_id"
        ") WHERE EXISTS ("
        "SELECT 1 FROM orders WHERE orders.id = fills.order_id AND orders.position_side <> 'BOTH')"
    )
    op.create_index("ix_fills_portfolio_id", "fills", ["portfolio_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_fills_portfolio_id", table_name="fills")
    with op.batch_alter_table("fills") as batch_op:
        batch_op.drop_column("position_side")
