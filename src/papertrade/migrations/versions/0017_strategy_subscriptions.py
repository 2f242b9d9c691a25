"""subscriptions to public strategies

Revision ID: 0017_strategy_subscriptions
Revises: 0017_comments_strategy

A subscription follows a portfolio (its trades) or a strategy (its executed signals): a
nullable strategy_id, and portfolio_id nullable too. Existing subscriptions are portfolio
subscriptions and keep every value (SQLite copies the table, which nothing references).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_strategy_subscriptions"
down_revision: str | None = "0017_comments_strategy"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("subscriptions") as batch_op:
        batch_op.alter_column("portfolio_id", existing_type=sa.Integer(), nullable=True)
        batch_op.add_column(sa.Column("strategy_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_subscriptions_strategy_id_strategies",
            "strategies",
            ["strategy_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch_op.create_unique_constraint(
            "uq_subscriptions_user_strategy", ["user_id", "strategy_id"]
        )
    op.create_index("ix_subscriptions_strategy", "subscriptions", ["strategy_id", "status"])


def downgrade() -> None:
    op.execute("DELETE FROM subscriptions WHERE strategy_id IS NOT NULL")
    op.drop_index("ix_subscriptions_strategy", table_name="subscriptions")
    with op.batch_alter_table("subscriptions") as batch_op:
        batch_op.drop_constraint("uq_subscriptions_user_strategy", type_="unique")
        batch_op.drop_constraint("fk_subscriptions_strategy_id_strategies", type_="foreignkey")
        batch_op.drop_column("strategy_id")
        batch_op.alter_column("portfolio_id", existing_type=sa.Integer(), nullable=False)
