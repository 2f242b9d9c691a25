"""period roots: a signed root every ATTESTATION_ROOT_EVERY_S, chained, covering each
portfolio's range (issue 31)

Revision ID: 0020_period_roots
Revises: 0019_paper_stays_paper

Schema: a chain entry's key and a root's key grow from a day ("2026-11-28") to a UTC second
("2026-11-28T13:59:59Z"): `chain_entries.day`, `attestations.day` and
`attestation_anchors.day` become VARCHAR(20) (SQLite copies the three tables); a chain head
remembers its newest entry's key (`chain_heads.period`, '' until its next entry); a root keeps
its signed PTA2 statement (`attestations.statement`, NULL on the PTA1 daily roots, which stay as
they are and verify as before).

Data: entries of a day not sealed yet take that day's first second as their key
("2026-11-28" → "2026-11-28T00:00:00Z"), so the next period root covers them.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_period_roots"
down_revision: str | None = "0019_paper_stays_paper"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_KEYED = ("attestations", "attestation_anchors", "chain_entries")


def _retype(length: int) -> None:
    if op.get_bind().dialect.name != "sqlite":
        for table in _KEYED:
            op.alter_column(table, "day", type_=sa.String(length), existing_nullable=False)
        return
    # SQLite copies each table; dropping the old attestations would cascade to their anchors
    # (foreign keys are on, and cannot be turned off inside the migration's transaction), so
    # the anchors are kept aside and put back.
    op.execute("CREATE TEMP TABLE _anchors_kept AS SELECT * FROM attestation_anchors")
    for table in _KEYED:
        with op.batch_alter_table(table, recreate="always") as batch:
            batch.alter_column("day", type_=sa.String(length), existing_nullable=False)
    op.execute("DELETE FROM attestation_anchors")
    op.execute("INSERT INTO attestation_anchors SELECT * FROM _anchors_kept")
    op.execute("DROP TABLE _anchors_kept")


def upgrade() -> None:
    _retype(20)
    op.add_column(
        "chain_heads", sa.Column("period", sa.String(20), server_default="", nullable=False)
    )
    op.add_column("attestations", sa.Column("statement", sa.Text(), nullable=True))
    op.execute(
        "UPDATE chain_entries SET day = day || 'T00:00:00Z' "
        "WHERE length(day) = 10 AND day NOT IN (SELECT day FROM attestations)"
    )


def downgrade() -> None:
    op.execute("DELETE FROM attestations WHERE statement IS NOT NULL")
    op.execute("UPDATE chain_entries SET day = substr(day, 1, 10) WHERE length(day) > 10")
    op.drop_column("attestations", "statement")
    op.drop_column("chain_heads", "period")
    _retype(10)
