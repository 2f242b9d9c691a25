"""isolated margin and hedge mode: margin type and isolated wallet per position, position sides

Revision ID: 0015_margin_isolated_and_hedge
Revises: 0015_notif_channels

Additive: existing portfolios stay in one-way mode (dual_side_position false), existing positions
and orders are BOTH-side and cross-margined, and nothing is moved. A position is now one per
portfolio, symbol and position side (BOTH in one-way mode, LONG and SHORT in hedge mode), so the
unique key of positions gains position_side. position_margin_changes lists a user's adds and
reductions of an isolated position's margin (GET /fapi/v1/positionMargin/history).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from papertrade.kit.dbtypes import DecimalType

revision: str = "0015_margin_isolated_and_hedge"
down_revision: str | None = "0015_notif_channels"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Plain ADD COLUMN (SQLite has it for a column with a constant default), never a batch copy
    # of portfolios: on SQLite a batch drops and recreates the table, and with foreign keys on,
    # dropping portfolios would cascade into every table that references it.
    op.add_column(
        "portfolios",
        sa.Column(
            "dual_side_position", sa.Boolean(), nullable=False, server_default=sa.text("false")
        ),
    )
    for table in ("orders", "conditional_orders", "positions"):
        op.add_column(
            table,
            sa.Column("position_side", sa.String(length=5), nullable=False, server_default="BOTH"),
        )
    op.add_column(
        "positions",
        sa.Column("margin_type", sa.String(length=8), nullable=False, server_default="cross"),
    )
    op.add_column(
        "positions",
        sa.Column("isolated_margin", DecimalType(), nullable=False, server_default="0"),
    )
    # No table references positions, so its batch copy on SQLite cascades nowhere.
    with op.batch_alter_table("positions") as batch_op:
        batch_op.drop_constraint("uq_positions_portfolio_id", type_="unique")
        batch_op.create_unique_constraint(
            "uq_positions_portfolio_id", ["portfolio_id", "symbol", "position_side"]
        )
    op.create_table(
        "position_margin_changes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("portfolio_id", sa.Integer(), nullable=False),
        sa.Column("symbol", sa.String(length=30), nullable=False),
        sa.Column("position_side", sa.String(length=5), nullable=False),
        sa.Column("type", sa.Integer(), nullable=False),
        sa.Column("amount", DecimalType(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["portfolio_id"],
            ["portfolios.id"],
            name=op.f("fk_position_margin_changes_portfolio_id_portfolios"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_position_margin_changes")),
    )
    op.create_index(
        "ix_position_margin_changes_portfolio",
        "position_margin_changes",
        ["portfolio_id", "symbol", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_position_margin_changes_portfolio", table_name="position_margin_changes")
    op.drop_table("position_margin_changes")
    with op.batch_alter_table("positions") as batch_op:
        batch_op.drop_constraint("uq_positions_portfolio_id", type_="unique")
        batch_op.create_unique_constraint("uq_positions_portfolio_id", ["portfolio_id", "symbol"])
        batch_op.drop_column("isolated_margin")
        batch_op.drop_column("margin_type")
        batch_op.drop_column("position_side")
    # SQLite drops a plain column in place (ALTER TABLE DROP COLUMN): no copy, no cascade.
    op.drop_column("conditional_orders", "position_side")
    op.drop_column("orders", "position_side")
    op.drop_column("portfolios", "dual_side_position")
