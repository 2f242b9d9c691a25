"""wallets and their ledger, USDT-TRC20 recharge orders and seen transfers, memberships, AI usage

Revision ID: 0009
Revises: 0007

New tables only: nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "wallets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("balance", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_wallets_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wallets")),
        sa.UniqueConstraint("user_id", name=op.f("uq_wallets_user_id")),
    )
    op.create_table(
        "wallet_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("wallet_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("balance_after", sa.BigInteger(), nullable=False),
        sa.Column("portfolio_id", sa.Integer(), nullable=True),
        sa.Column("reference", sa.String(length=100), nullable=True),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("note", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["wallet_id"],
            ["wallets.id"],
            name=op.f("fk_wallet_entries_wallet_id_wallets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_wallet_entries")),
    )
    op.create_index("ix_wallet_entries_wallet", "wallet_entries", ["wallet_id", "id"])
    op.create_table(
        "recharge_orders",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=False),
        sa.Column("pay_amount", sa.BigInteger(), nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("pending_key", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("paid_at", sa.BigInteger(), nullable=True),
        sa.Column("tx_id", sa.String(length=80), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_recharge_orders_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_recharge_orders")),
        sa.UniqueConstraint("pending_key", name=op.f("uq_recharge_orders_pending_key")),
        sa.UniqueConstraint("tx_id", name=op.f("uq_recharge_orders_tx_id")),
    )
    op.create_index("ix_recharge_orders_user", "recharge_orders", ["user_id", "id"])
    op.create_index(op.f("ix_recharge_orders_status"), "recharge_orders", ["status"])
    op.create_table(
        "tron_transfers",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("tx_id", sa.String(length=80), nullable=False),
        sa.Column("from_address", sa.String(length=64), nullable=False),
        sa.Column("to_address", sa.String(length=64), nullable=False),
        sa.Column("value", sa.BigInteger(), nullable=False),
        sa.Column("block_timestamp", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("order_id", sa.Integer(), nullable=True),
        sa.Column("resolved_by", sa.String(length=100), nullable=True),
        sa.Column("note", sa.String(length=200), nullable=False),
        sa.Column("seen_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["order_id"],
            ["recharge_orders.id"],
            name=op.f("fk_tron_transfers_order_id_recharge_orders"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tron_transfers")),
        sa.UniqueConstraint("tx_id", name=op.f("uq_tron_transfers_tx_id")),
    )
    op.create_index(op.f("ix_tron_transfers_status"), "tron_transfers", ["status"])
    op.create_table(
        "memberships",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("tier", sa.String(length=20), nullable=False),
        sa.Column("period_start", sa.BigInteger(), nullable=False),
        sa.Column("paid_until", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_memberships_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_memberships")),
    )
    op.create_table(
        "ai_usage",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("day", sa.Integer(), nullable=False),
        sa.Column("used", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_ai_usage_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", "day", name=op.f("pk_ai_usage")),
    )


def downgrade() -> None:
    op.drop_table("ai_usage")
    op.drop_table("memberships")
    op.drop_index(op.f("ix_tron_transfers_status"), table_name="tron_transfers")
    op.drop_table("tron_transfers")
    op.drop_index(op.f("ix_recharge_orders_status"), table_name="recharge_orders")
    op.drop_index("ix_recharge_orders_user", table_name="recharge_orders")
    op.drop_table("recharge_orders")
    op.drop_index("ix_wallet_entries_wallet", table_name="wallet_entries")
    op.drop_table("wallet_entries")
    op.drop_table("wallets")
