"""telegram: link codes, bindings, received updates, outbound messages

Revision ID: 0010_2
Revises: 0010

New tables only (docs/notifications.md, Telegram).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_2"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _user_fk(table: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        ["user_id"], ["users.id"], name=op.f(f"fk_{table}_user_id_users"), ondelete="CASCADE"
    )


def upgrade() -> None:
    op.create_table(
        "telegram_links",
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.Column("used_at", sa.BigInteger(), nullable=True),
        _user_fk("telegram_links"),
        sa.PrimaryKeyConstraint("code_hash", name=op.f("pk_telegram_links")),
    )
    op.create_index(op.f("ix_telegram_links_user_id"), "telegram_links", ["user_id"])
    op.create_table(
        "telegram_bindings",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("telegram_user_id", sa.BigInteger(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("username", sa.String(64), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("bound_at", sa.BigInteger(), nullable=False),
        sa.Column("inactive_since", sa.BigInteger(), nullable=True),
        sa.Column("signal_portfolio_id", sa.Integer(), nullable=True),
        sa.Column("signal_size_percent", sa.BigInteger(), nullable=False),
        _user_fk("telegram_bindings"),
        sa.ForeignKeyConstraint(
            ["signal_portfolio_id"],
            ["portfolios.id"],
            name=op.f("fk_telegram_bindings_signal_portfolio_id_portfolios"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_telegram_bindings")),
        sa.UniqueConstraint("telegram_user_id", name=op.f("uq_telegram_bindings_telegram_user_id")),
    )
    op.create_table(
        "telegram_updates",
        sa.Column("update_id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("received_at", sa.BigInteger(), nullable=False),
        sa.Column("processed_at", sa.BigInteger(), nullable=True),
        sa.Column("outcome", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("update_id", name=op.f("pk_telegram_updates")),
    )
    op.create_table(
        "telegram_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chat_id", sa.BigInteger(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("notification_id", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("error", sa.String(300), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("sent_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_telegram_messages")),
        sa.UniqueConstraint(
            "notification_id", "chat_id", name="uq_telegram_messages_notification_id_chat_id"
        ),
    )
    op.create_index("ix_telegram_messages_status_id", "telegram_messages", ["status", "id"])


def downgrade() -> None:
    op.drop_index("ix_telegram_messages_status_id", table_name="telegram_messages")
    op.drop_table("telegram_messages")
    op.drop_table("telegram_updates")
    op.drop_table("telegram_bindings")
    op.drop_index(op.f("ix_telegram_links_user_id"), table_name="telegram_links")
    op.drop_table("telegram_links")
