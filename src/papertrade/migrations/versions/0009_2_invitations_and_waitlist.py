"""invitation codes, their uses and the waitlist

Revision ID: 0009_2
Revises: 0009

New tables only: nothing existing changes.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_2"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "invite_codes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(length=16), nullable=False),
        sa.Column("description", sa.String(length=200), nullable=False),
        sa.Column("max_uses", sa.Integer(), nullable=True),
        sa.Column("use_count", sa.Integer(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=True),
        sa.Column("owner_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_invite_codes_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_invite_codes")),
        sa.UniqueConstraint("code", name=op.f("uq_invite_codes_code")),
    )
    op.create_index(op.f("ix_invite_codes_owner_id"), "invite_codes", ["owner_id"])
    op.create_table(
        "invite_uses",
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("code_id", sa.Integer(), nullable=False),
        sa.Column("invited_by", sa.Integer(), nullable=True),
        sa.Column("used_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["code_id"],
            ["invite_codes.id"],
            name=op.f("fk_invite_uses_code_id_invite_codes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_invite_uses_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_invite_uses")),
    )
    op.create_table(
        "waitlist",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("referral_code", sa.String(length=16), nullable=False),
        sa.Column("referred_by", sa.Integer(), nullable=True),
        sa.Column("verify_token_hash", sa.String(length=64), nullable=False),
        sa.Column("verified_at", sa.BigInteger(), nullable=True),
        sa.Column("invited_at", sa.BigInteger(), nullable=True),
        sa.Column("invite_code_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["invite_code_id"],
            ["invite_codes.id"],
            name=op.f("fk_waitlist_invite_code_id_invite_codes"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["referred_by"],
            ["waitlist.id"],
            name=op.f("fk_waitlist_referred_by_waitlist"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_waitlist")),
        sa.UniqueConstraint("email", name=op.f("uq_waitlist_email")),
        sa.UniqueConstraint("referral_code", name=op.f("uq_waitlist_referral_code")),
        sa.UniqueConstraint("verify_token_hash", name=op.f("uq_waitlist_verify_token_hash")),
    )


def downgrade() -> None:
    op.drop_table("waitlist")
    op.drop_table("invite_uses")
    op.drop_index(op.f("ix_invite_codes_owner_id"), table_name="invite_codes")
    op.drop_table("invite_codes")
