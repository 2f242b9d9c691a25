"""copy trading: leaders' terms, relations, mirrored trades, revenue-share settlements

Revision ID: 0014
Revises: 0013

New tables only: nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column],
        [f"{target}.id"],
        name=op.f(f"fk_{table}_{column}_{target}"),
        ondelete="CASCADE",
    )


def upgrade() -> None:
    op.create_table(
        "copy_leaders",
        sa.Column("portfolio_id", sa.Integer(), nullable=False),
        sa.Column("profit_share_pct", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        _fk("copy_leaders", "portfolio_id", "portfolios"),
        sa.PrimaryKeyConstraint("portfolio_id", name=op.f("pk_copy_leaders")),
    )
    op.create_table(
        "copy_relations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("leader_portfolio_id", sa.Integer(), nullable=False),
        sa.Column("leader_user_id", sa.Integer(), nullable=False),
        sa.Column("follower_portfolio_id", sa.Integer(), nullable=False),
        sa.Column("follower_user_id", sa.Integer(), nullable=False),
        sa.Column("mode", sa.String(length=12), nullable=False),
        sa.Column("allocation", sa.BigInteger(), nullable=False),
        sa.Column("amount", sa.BigInteger(), nullable=True),
        sa.Column("multiplier", sa.BigInteger(), nullable=True),
        sa.Column("leverage", sa.Integer(), nullable=True),
        sa.Column("max_order_margin", sa.BigInteger(), nullable=True),
        sa.Column("stop_pct", sa.BigInteger(), nullable=True),
        sa.Column("slippage_pct", sa.BigInteger(), nullable=True),
        sa.Column("symbols", sa.Text(), nullable=False),
        sa.Column("profit_share_pct", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("start_event_id", sa.BigInteger(), nullable=False),
        sa.Column("cum_net_pnl", sa.BigInteger(), nullable=False),
        sa.Column("hwm", sa.BigInteger(), nullable=False),
        sa.Column("fees_paid", sa.BigInteger(), nullable=False),
        sa.Column("settled_week", sa.BigInteger(), nullable=False),
        sa.Column("end_reason", sa.String(length=12), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=True),
        _fk("copy_relations", "leader_portfolio_id", "portfolios"),
        _fk("copy_relations", "leader_user_id", "users"),
        _fk("copy_relations", "follower_portfolio_id", "portfolios"),
        _fk("copy_relations", "follower_user_id", "users"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_copy_relations")),
    )
    op.create_index("ix_copy_relations_leader", "copy_relations", ["leader_portfolio_id", "status"])
    op.create_index("ix_copy_relations_follower", "copy_relations", ["follower_user_id", "id"])
    op.create_index(
        op.f("ix_copy_relations_follower_portfolio_id"),
        "copy_relations",
        ["follower_portfolio_id"],
    )
    op.create_table(
        "copy_trades",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("relation_id", sa.Integer(), nullable=False),
        sa.Column("leader_order_id", sa.BigInteger(), nullable=False),
        sa.Column("leg", sa.String(length=5), nullable=False),
        sa.Column("symbol", sa.String(length=30), nullable=False),
        sa.Column("side", sa.String(length=4), nullable=False),
        sa.Column("leader_price", sa.BigInteger(), nullable=False),
        sa.Column("leader_quantity", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("reason", sa.String(length=20), nullable=True),
        sa.Column("detail", sa.String(length=300), nullable=False),
        sa.Column("follower_order_id", sa.BigInteger(), nullable=True),
        sa.Column("quantity", sa.BigInteger(), nullable=False),
        sa.Column("price", sa.BigInteger(), nullable=True),
        sa.Column("realized_pnl", sa.BigInteger(), nullable=False),
        sa.Column("commission", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        _fk("copy_trades", "relation_id", "copy_relations"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_copy_trades")),
        sa.UniqueConstraint(
            "relation_id",
            "leader_order_id",
            "leg",
            name=op.f("uq_copy_trades_relation_id_leader_order_id_leg"),
        ),
    )
    op.create_index("ix_copy_trades_relation", "copy_trades", ["relation_id", "id"])
    op.create_index(op.f("ix_copy_trades_follower_order_id"), "copy_trades", ["follower_order_id"])
    op.create_table(
        "copy_settlements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("relation_id", sa.Integer(), nullable=False),
        sa.Column("leader_user_id", sa.BigInteger(), nullable=False),
        sa.Column("follower_user_id", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.String(length=8), nullable=False),
        sa.Column("net_pnl", sa.BigInteger(), nullable=False),
        sa.Column("hwm_before", sa.BigInteger(), nullable=False),
        sa.Column("hwm_after", sa.BigInteger(), nullable=False),
        sa.Column("pct", sa.BigInteger(), nullable=False),
        sa.Column("fee", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        _fk("copy_settlements", "relation_id", "copy_relations"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_copy_settlements")),
    )
    op.create_index("ix_copy_settlements_relation", "copy_settlements", ["relation_id", "id"])
    op.create_index(
        op.f("ix_copy_settlements_leader_user_id"), "copy_settlements", ["leader_user_id"]
    )
    op.create_index(
        op.f("ix_copy_settlements_follower_user_id"), "copy_settlements", ["follower_user_id"]
    )


def downgrade() -> None:
    op.drop_table("copy_settlements")
    op.drop_table("copy_trades")
    op.drop_table("copy_relations")
    op.drop_table("copy_leaders")
