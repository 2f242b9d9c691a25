"""users: one account per email address, whatever its capitals

Revision ID: 0005
Revises: 0004

Emails were unique only as typed, so `D@EXAMPLE.COM` could sign up beside `d@example.com`. From
now on every address is kept in lower case (the service normalises what it is given the same
way) and a unique index on lower(email) keeps it so.

Accounts already there whose addresses differ only in case: the oldest (created first, the lower
id on a tie) keeps the address, in lower case; each later one is renamed to
`<address>#duplicate-<id>`, which no real address can be. Nothing is deleted, and the owner of a
renamed account can still sign in by typing that name as the email (docs/errors.md).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EMAIL_LENGTH = 320
users = sa.table(
    "users",
    sa.column("id", sa.Integer),
    sa.column("email", sa.String),
    sa.column("created_at", sa.BigInteger),
)


def _new_emails(rows: Sequence[tuple[int, str]]) -> tuple[dict[int, str], dict[int, str]]:
    """(renamed later duplicates, lower-cased keepers) by user id, from rows oldest first."""
    kept: set[str] = set()
    renamed: dict[int, str] = {}
    lowered: dict[int, str] = {}
    for user_id, email in rows:
        address = email.strip().lower()
        if address in kept:
            suffix = f"#duplicate-{user_id}"
            renamed[user_id] = address[: EMAIL_LENGTH - len(suffix)] + suffix
            continue
        kept.add(address)
        if address != email:
            lowered[user_id] = address
    return renamed, lowered


def upgrade() -> None:
    bind = op.get_bind()
    oldest_first = sa.select(users.c.id, users.c.email).order_by(users.c.created_at, users.c.id)
    renamed, lowered = _new_emails([(row.id, row.email) for row in bind.execute(oldest_first)])
    # Duplicates first: a keeper's lower-case address may be what a later duplicate holds now.
    for changes in (renamed, lowered):
        for user_id, email in changes.items():
            bind.execute(sa.update(users).where(users.c.id == user_id).values(email=email))
    op.create_index(op.f("uq_users_email_lower"), "users", [sa.text("lower(email)")], unique=True)


def downgrade() -> None:
    # Addresses stay in lower case and renamed duplicates keep their names.
    op.drop_index(op.f("uq_users_email_lower"), table_name="users")
