"""live accounts: exchange sub-accounts mirroring a portfolio, and their mirrored orders

Revision ID: 0012_2
Revises: 0012

New tables only (docs/live.md): live_accounts, live_orders.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_2"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "live_accounts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("exchange", sa.String(20), nullable=False),
        sa.Column("label", sa.String(100), nullable=False),
        sa.Column("api_key", sa.String(128), nullable=False),
        sa.Column("api_secret_encrypted", sa.Text(), nullable=False),
        sa.Column("withdrawals", sa.String(12), nullable=False),
        sa.Column("source_portfolio_id", sa.Integer(), nullable=True),
        sa.Column("sizing", sa.String(10), nullable=False),
        sa.Column("sizing_value", sa.BigInteger(), nullable=False),
        sa.Column("symbols", sa.Text(), nullable=False),
        sa.Column("max_position_notional", sa.BigInteger(), nullable=True),
        sa.Column("max_daily_loss", sa.BigInteger(), nullable=True),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("kill_reason", sa.String(200), nullable=False),
        sa.Column("killed_at", sa.BigInteger(), nullable=True),
        sa.Column("consecutive_errors", sa.Integer(), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("day_start_equity", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_live_accounts_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_live_accounts")),
    )
    op.create_index(op.f("ix_live_accounts_user_id"), "live_accounts", ["user_id"])
    op.create_table(
        "live_orders",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("live_account_id", sa.Integer(), nullable=False),
        sa.Column("source_event_id", sa.BigInteger(), nullable=False),
        sa.Column("source_order_id", sa.BigInteger(), nullable=False),
        sa.Column("client_order_id", sa.String(36), nullable=False),
        sa.Column("symbol", sa.String(30), nullable=False),
        sa.Column("side", sa.String(4), nullable=False),
        sa.Column("source_quantity", sa.BigInteger(), nullable=False),
        sa.Column("source_price", sa.BigInteger(), nullable=False),
        sa.Column("quantity", sa.BigInteger(), nullable=True),
        sa.Column("reduce_only", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("exchange_order_id", sa.String(40), nullable=True),
        sa.Column("answer", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["live_account_id"],
            ["live_accounts.id"],
            name=op.f("fk_live_orders_live_account_id_live_accounts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_live_orders")),
        sa.UniqueConstraint("client_order_id", name=op.f("uq_live_orders_client_order_id")),
        sa.UniqueConstraint("live_account_id", "source_event_id", name="uq_live_orders_source"),
    )
    op.create_index(op.f("ix_live_orders_live_account_id"), "live_orders", ["live_account_id"])


def downgrade() -> None:
    op.drop_table("live_orders")
    op.drop_table("live_accounts")
