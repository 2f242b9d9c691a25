"""orders: index open orders by portfolio

Revision ID: 0004
Revises: 0003

The margin that a portfolio's resting orders reserve is summed on every order it places. With
only (portfolio_id, status) to go by, that sum read every order the portfolio ever placed, so
placing an order got slower as its history grew. Nothing queries by (portfolio_id, status).
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_orders_portfolio_status", table_name="orders")
    op.create_index("ix_orders_portfolio_open", "orders", ["portfolio_id", "is_open"])


def downgrade() -> None:
    op.drop_index("ix_orders_portfolio_open", table_name="orders")
    op.create_index("ix_orders_portfolio_status", "orders", ["portfolio_id", "status"])
