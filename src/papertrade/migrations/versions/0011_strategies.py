"""strategies: versions, backtests, live deployments, their signals, and a candle cache

Revision ID: 0011
Revises: 0010_4

New tables only: nothing existing changes. Money columns are BIGINT in units of 10^-8
(kit/dbtypes.DecimalType), like every other amount.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010_4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "candle_cache",
        sa.Column("source", sa.String(length=10), nullable=False),
        sa.Column("symbol", sa.String(length=30), nullable=False),
        sa.Column("timeframe", sa.String(length=4), nullable=False),
        sa.Column("open_time", sa.BigInteger(), nullable=False),
        sa.Column("open", sa.BigInteger(), nullable=False),
        sa.Column("high", sa.BigInteger(), nullable=False),
        sa.Column("low", sa.BigInteger(), nullable=False),
        sa.Column("close", sa.BigInteger(), nullable=False),
        sa.Column("volume", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint(
            "source", "symbol", "timeframe", "open_time", name=op.f("pk_candle_cache")
        ),
    )
    op.create_table(
        "strategies",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("description", sa.String(length=2000), nullable=False),
        sa.Column("visibility", sa.String(length=10), nullable=False),
        sa.Column("latest_version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.Column("deleted_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_strategies_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_strategies")),
    )
    with op.batch_alter_table("strategies", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_strategies_user_id"), ["user_id"], unique=False)

    op.create_table(
        "strategy_backtests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("strategy_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("job_id", sa.String(length=64), nullable=True),
        sa.Column("deployment_id", sa.Integer(), nullable=True),
        sa.Column("symbol", sa.String(length=30), nullable=False),
        sa.Column("timeframe", sa.String(length=4), nullable=False),
        sa.Column("start_ms", sa.BigInteger(), nullable=False),
        sa.Column("end_ms", sa.BigInteger(), nullable=False),
        sa.Column("initial_balance", sa.BigInteger(), nullable=False),
        sa.Column("maker_fee_rate", sa.BigInteger(), nullable=False),
        sa.Column("taker_fee_rate", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("metrics", sa.JSON(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["strategy_id"],
            ["strategies.id"],
            name=op.f("fk_strategy_backtests_strategy_id_strategies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_strategy_backtests")),
    )
    with op.batch_alter_table("strategy_backtests", schema=None) as batch_op:
        batch_op.create_index(
            "ix_strategy_backtests_strategy_id_id", ["strategy_id", "id"], unique=False
        )

    op.create_table(
        "strategy_deployments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("strategy_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("portfolio_id", sa.Integer(), nullable=False),
        sa.Column("symbol", sa.String(length=30), nullable=False),
        sa.Column("timeframe", sa.String(length=4), nullable=False),
        sa.Column("status", sa.String(length=10), nullable=False),
        sa.Column("last_bar_ms", sa.BigInteger(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["portfolio_id"],
            ["portfolios.id"],
            name=op.f("fk_strategy_deployments_portfolio_id_portfolios"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["strategy_id"],
            ["strategies.id"],
            name=op.f("fk_strategy_deployments_strategy_id_strategies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_strategy_deployments")),
    )
    with op.batch_alter_table("strategy_deployments", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_strategy_deployments_portfolio_id"), ["portfolio_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_strategy_deployments_status"), ["status"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_strategy_deployments_strategy_id"), ["strategy_id"], unique=False
        )

    op.create_table(
        "strategy_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("strategy_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("summary", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["strategy_id"],
            ["strategies.id"],
            name=op.f("fk_strategy_versions_strategy_id_strategies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_strategy_versions")),
        sa.UniqueConstraint("strategy_id", "number", name=op.f("uq_strategy_versions_strategy_id")),
    )
    op.create_table(
        "strategy_signals",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("strategy_id", sa.Integer(), nullable=False),
        sa.Column("deployment_id", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("time", sa.BigInteger(), nullable=False),
        sa.Column("bar_time", sa.BigInteger(), nullable=False),
        sa.Column("rule", sa.String(length=300), nullable=False),
        sa.Column("intent", sa.JSON(), nullable=False),
        sa.Column("outcome", sa.String(length=10), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=False),
        sa.Column("order_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["deployment_id"],
            ["strategy_deployments.id"],
            name=op.f("fk_strategy_signals_deployment_id_strategy_deployments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["strategy_id"],
            ["strategies.id"],
            name=op.f("fk_strategy_signals_strategy_id_strategies"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_strategy_signals")),
    )
    with op.batch_alter_table("strategy_signals", schema=None) as batch_op:
        batch_op.create_index(
            "ix_strategy_signals_strategy_id_id", ["strategy_id", "id"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("strategy_signals", schema=None) as batch_op:
        batch_op.drop_index("ix_strategy_signals_strategy_id_id")

    op.drop_table("strategy_signals")
    op.drop_table("strategy_versions")
    with op.batch_alter_table("strategy_deployments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_strategy_deployments_strategy_id"))
        batch_op.drop_index(batch_op.f("ix_strategy_deployments_status"))
        batch_op.drop_index(batch_op.f("ix_strategy_deployments_portfolio_id"))

    op.drop_table("strategy_deployments")
    with op.batch_alter_table("strategy_backtests", schema=None) as batch_op:
        batch_op.drop_index("ix_strategy_backtests_strategy_id_id")

    op.drop_table("strategy_backtests")
    with op.batch_alter_table("strategies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_strategies_user_id"))

    op.drop_table("strategies")
    op.drop_table("candle_cache")
