"""conditional_orders: stop, take-profit and trailing-stop orders waiting for their trigger

Revision ID: 0013
Revises: 0012_2

A new table only. Ids are handed out from the orders' id sequence (orders/ids.py), so the
column has no sequence of its own.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from papertrade.kit.dbtypes import DecimalType

revision: str = "0013"
down_revision: str | None = "0012_2"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "conditional_orders",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("portfolio_id", sa.Integer(), nullable=False),
        sa.Column("symbol", sa.String(length=30), nullable=False),
        sa.Column("side", sa.String(length=4), nullable=False),
        sa.Column("type", sa.String(length=24), nullable=False),
        sa.Column("working_type", sa.String(length=16), nullable=False),
        sa.Column("trigger_price", DecimalType(), nullable=True),
        sa.Column("price", DecimalType(), nullable=True),
        sa.Column("quantity", DecimalType(), nullable=True),
        sa.Column("close_position", sa.Boolean(), nullable=False),
        sa.Column("reduce_only", sa.Boolean(), nullable=False),
        sa.Column("price_protect", sa.Boolean(), nullable=False),
        sa.Column("callback_rate", DecimalType(), nullable=True),
        sa.Column("activation_price", DecimalType(), nullable=True),
        sa.Column("time_in_force", sa.String(length=3), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("is_open", sa.Boolean(), nullable=False),
        sa.Column("client_algo_id", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("actual_order_id", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("triggered_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["portfolio_id"],
            ["portfolios.id"],
            name=op.f("fk_conditional_orders_portfolio_id_portfolios"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conditional_orders")),
        sa.UniqueConstraint(
            "portfolio_id", "client_algo_id", name=op.f("uq_conditional_orders_portfolio_id")
        ),
    )
    op.create_index(
        "ix_conditional_orders_portfolio_open", "conditional_orders", ["portfolio_id", "is_open"]
    )
    op.create_index("ix_conditional_orders_open", "conditional_orders", ["is_open"])


def downgrade() -> None:
    op.drop_index("ix_conditional_orders_open", table_name="conditional_orders")
    op.drop_index("ix_conditional_orders_portfolio_open", table_name="conditional_orders")
    op.drop_table("conditional_orders")
