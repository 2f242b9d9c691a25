"""subscriptions: signal subscriptions to public portfolios and their owners' prices

Revision ID: 0014_2
Revises: 0014

New tables only: nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014_2"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "subscription_prices",
        sa.Column("portfolio_id", sa.Integer(), nullable=False),
        sa.Column("price", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["portfolio_id"],
            ["portfolios.id"],
            name=op.f("fk_subscription_prices_portfolio_id_portfolios"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("portfolio_id", name=op.f("pk_subscription_prices")),
    )
    op.create_table(
        "subscriptions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("portfolio_id", sa.Integer(), nullable=False),
        sa.Column("owner_user_id", sa.BigInteger(), nullable=False),
        sa.Column("tier", sa.String(length=5), nullable=False),
        sa.Column("status", sa.String(length=9), nullable=False),
        sa.Column("price", sa.BigInteger(), nullable=False),
        sa.Column("channels", sa.String(length=100), nullable=False),
        sa.Column("events", sa.String(length=100), nullable=False),
        sa.Column("symbols", sa.String(length=2000), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("current_period_end", sa.BigInteger(), nullable=True),
        sa.Column("cancel_at_period_end", sa.Boolean(), nullable=False),
        sa.Column("cancelled_at", sa.BigInteger(), nullable=True),
        sa.Column("paid_total", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_subscriptions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["portfolio_id"],
            ["portfolios.id"],
            name=op.f("fk_subscriptions_portfolio_id_portfolios"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_subscriptions")),
        sa.UniqueConstraint(
            "user_id", "portfolio_id", name=op.f("uq_subscriptions_user_id_portfolio_id")
        ),
    )
    op.create_index("ix_subscriptions_portfolio", "subscriptions", ["portfolio_id", "status"])
    op.create_index("ix_subscriptions_renewal", "subscriptions", ["tier", "current_period_end"])


def downgrade() -> None:
    op.drop_table("subscriptions")
    op.drop_table("subscription_prices")
