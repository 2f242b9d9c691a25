"""trailing stops keep their best price: conditional_orders.trailing_extreme

Revision ID: 0015_screen
Revises: 0014_3

One nullable column: a trailing stop's best price since activation, written by the engine so a
restart resumes from it instead of from the price of then. Existing rows keep NULL (not yet
activated, or activated before this release: they resume from the next price, as before).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from papertrade.kit.dbtypes import DecimalType

revision: str = "0015_screen"
down_revision: str | None = "0014_3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("conditional_orders") as batch:
        batch.add_column(sa.Column("trailing_extreme", DecimalType(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("conditional_orders") as batch:
        batch.drop_column("trailing_extreme")
