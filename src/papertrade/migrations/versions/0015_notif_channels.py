"""notification channels: Telegram signal channels, email digests, Finnhub signal portfolios

Revision ID: 0015_notif_channels
Revises: 0015_money_feedback_screenshots

Additive only: two new tables (`telegram_channels`, `email_digests`) and three nullable columns on
`inbound_sources` (the portfolio a Finnhub alert trades, the action and the size).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015_notif_channels"
down_revision: str | None = "0015_money_feedback_screenshots"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "telegram_channels",
        sa.Column("chat_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(length=128), nullable=False),
        sa.Column("portfolio_id", sa.Integer(), nullable=True),
        sa.Column("size_percent", sa.BigInteger(), nullable=False),
        sa.Column("connected_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_telegram_channels_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["portfolio_id"],
            ["portfolios.id"],
            name=op.f("fk_telegram_channels_portfolio_id_portfolios"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("chat_id", name=op.f("pk_telegram_channels")),
    )
    op.create_index("ix_telegram_channels_user_id", "telegram_channels", ["user_id"])
    op.create_table(
        "email_digests",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("frequency", sa.String(length=10), nullable=False),
        sa.Column("last_sent_at", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_email_digests_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_email_digests")),
    )
    # Plain ADD COLUMN (nullable, no constraint): SQLite does it in place, no table rebuild.
    op.add_column("inbound_sources", sa.Column("signal_portfolio_id", sa.Integer(), nullable=True))
    op.add_column(
        "inbound_sources", sa.Column("signal_size_percent", sa.BigInteger(), nullable=True)
    )
    op.add_column("inbound_sources", sa.Column("signal_action", sa.String(10), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("inbound_sources") as batch:
        batch.drop_column("signal_action")
        batch.drop_column("signal_size_percent")
        batch.drop_column("signal_portfolio_id")
    op.drop_table("email_digests")
    op.drop_index("ix_telegram_channels_user_id", table_name="telegram_channels")
    op.drop_table("telegram_channels")
