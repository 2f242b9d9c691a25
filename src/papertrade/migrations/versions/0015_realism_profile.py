"""realism: a realism profile per portfolio, and each fill's explanation

Revision ID: 0015_realism_profile
Revises: 0015_margin_isolated_and_hedge

Columns added only: every existing portfolio gets the "mark" profile (fill at the mark, as
before), and existing fills keep NULL explanations (they were all filled at the mark or at their
limit price, with no slippage).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from papertrade.kit.dbtypes import DecimalType

revision: str = "0015_realism_profile"
down_revision: str | None = "0015_margin_isolated_and_hedge"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "portfolios",
        sa.Column("realism", sa.String(length=10), nullable=False, server_default="mark"),
    )
    op.add_column("fills", sa.Column("price_source", sa.String(length=5), nullable=True))
    op.add_column("fills", sa.Column("mark_price", DecimalType(), nullable=True))
    op.add_column("fills", sa.Column("slippage_bps", DecimalType(), nullable=True))
    op.add_column("fills", sa.Column("slippage", DecimalType(), nullable=True))
    op.add_column("fills", sa.Column("fee_rate", DecimalType(), nullable=True))
    op.add_column("fills", sa.Column("latency_ms", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("fills") as batch_op:
        for name in ("latency_ms", "fee_rate", "slippage", "slippage_bps", "mark_price"):
            batch_op.drop_column(name)
        batch_op.drop_column("price_source")
    with op.batch_alter_table("portfolios") as batch_op:
        batch_op.drop_column("realism")
