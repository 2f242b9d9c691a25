"""telegram update chat: a received update remembers its chat, so that a chat's updates are
processed in the order Telegram numbered them (a signal, then its close)

Revision ID: 0021_telegram_update_chat
Revises: 0020_period_roots

Schema: `telegram_updates.chat_id` (BIGINT, NULL) and the index
`ix_telegram_updates_chat_waiting` (chat_id, processed_at, update_id): a chat's updates still
waiting, oldest first.

Data: updates not processed yet take the chat named in their body; processed ones keep NULL
(nothing waits behind them).
"""

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_telegram_update_chat"
down_revision: str | None = "0020_period_roots"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _chat_of(body: str) -> int | None:
    # As tg/updates.chat_of at the time of writing: a migration must not change with the code.
    try:
        update = json.loads(body)
    except ValueError:
        return None
    if not isinstance(update, dict):
        return None
    for kind in ("message", "channel_post", "my_chat_member"):
        part = update.get(kind)
        chat = part.get("chat") if isinstance(part, dict) else None
        chat_id = chat.get("id") if isinstance(chat, dict) else None
        if (
            isinstance(chat_id, int)
            and not isinstance(chat_id, bool)
            and -(2**63) <= chat_id < 2**63
        ):
            return chat_id
    return None


def upgrade() -> None:
    op.add_column("telegram_updates", sa.Column("chat_id", sa.BigInteger(), nullable=True))
    op.create_index(
        "ix_telegram_updates_chat_waiting",
        "telegram_updates",
        ["chat_id", "processed_at", "update_id"],
    )
    bind = op.get_bind()
    waiting = bind.execute(
        sa.text("SELECT update_id, body FROM telegram_updates WHERE processed_at IS NULL")
    ).all()
    for update_id, body in waiting:
        chat_id = _chat_of(body)
        if chat_id is not None:
            bind.execute(
                sa.text("UPDATE telegram_updates SET chat_id = :chat WHERE update_id = :id"),
                {"chat": chat_id, "id": update_id},
            )


def downgrade() -> None:
    op.drop_index("ix_telegram_updates_chat_waiting", table_name="telegram_updates")
    with op.batch_alter_table("telegram_updates") as batch:
        batch.drop_column("chat_id")
