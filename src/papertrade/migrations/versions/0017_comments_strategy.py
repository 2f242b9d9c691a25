"""comments on public strategies too: a comment is on a portfolio or on a strategy

Revision ID: 0017_comments_strategy
Revises: 0016_conditional_origin

Existing comments keep their portfolio and replies; strategy_id is NULL for them. A check keeps
each comment on exactly one of the two.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_comments_strategy"
down_revision: str | None = "0016_conditional_origin"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ONE_TARGET = "(portfolio_id IS NULL) <> (strategy_id IS NULL)"
KEPT = "id, portfolio_id, user_id, parent_id, text, created_at, edited_at, deleted_at"


def _fk(column: str, referred: str, named: str) -> sa.ForeignKeyConstraint:
    """The foreign key as the models name it (`named`: the table it refers to after renames)."""
    return sa.ForeignKeyConstraint(
        [column], [f"{referred}.id"], name=op.f(f"fk_comments_{column}_{named}"), ondelete="CASCADE"
    )


def _rebuild_on_sqlite(table: str, *, with_strategy: bool) -> None:
    """SQLite cannot change a column's NULL or add a check in place, and a batch copy would
    lose replies: with foreign keys on, dropping the old table cascades into a copy whose
    parent_id still names `comments`. So the copy refers to itself, and the rename carries that
    reference over to `comments`."""
    columns: list[sa.schema.SchemaItem] = [
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("portfolio_id", sa.Integer(), nullable=with_strategy),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("parent_id", sa.Integer(), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("edited_at", sa.BigInteger(), nullable=True),
        sa.Column("deleted_at", sa.BigInteger(), nullable=True),
    ]
    constraints: list[sa.schema.SchemaItem] = [
        _fk("portfolio_id", "portfolios", "portfolios"),
        _fk("user_id", "users", "users"),
        _fk("parent_id", table, "comments"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_comments")),
    ]
    if with_strategy:
        columns.insert(2, sa.Column("strategy_id", sa.Integer(), nullable=True))
        constraints += [
            _fk("strategy_id", "strategies", "strategies"),
            sa.CheckConstraint(ONE_TARGET, name=op.f("ck_comments_one_target")),
        ]
    op.create_table(table, *columns, *constraints)
    op.execute(f"INSERT INTO {table} ({KEPT}) SELECT {KEPT} FROM comments ORDER BY id")
    op.drop_table("comments")  # its indexes go with it
    op.rename_table(table, "comments")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_on_sqlite("comments_new", with_strategy=True)
        op.create_index("ix_comments_portfolio", "comments", ["portfolio_id", "parent_id", "id"])
        op.create_index("ix_comments_parent", "comments", ["parent_id", "id"])
    else:
        op.add_column("comments", sa.Column("strategy_id", sa.Integer(), nullable=True))
        op.create_foreign_key(
            op.f("fk_comments_strategy_id_strategies"),
            "comments",
            "strategies",
            ["strategy_id"],
            ["id"],
            ondelete="CASCADE",
        )
        op.alter_column("comments", "portfolio_id", existing_type=sa.Integer(), nullable=True)
        op.create_check_constraint(op.f("ck_comments_one_target"), "comments", ONE_TARGET)
    op.create_index("ix_comments_strategy", "comments", ["strategy_id", "parent_id", "id"])


def downgrade() -> None:
    # Comments on strategies have no place in the older schema.
    op.execute("DELETE FROM comments WHERE strategy_id IS NOT NULL")
    op.drop_index("ix_comments_strategy", table_name="comments")
    if op.get_bind().dialect.name == "sqlite":
        _rebuild_on_sqlite("comments_old", with_strategy=False)
        op.create_index("ix_comments_portfolio", "comments", ["portfolio_id", "parent_id", "id"])
        op.create_index("ix_comments_parent", "comments", ["parent_id", "id"])
    else:
        op.drop_constraint(op.f("ck_comments_one_target"), "comments", type_="check")
        op.alter_column("comments", "portfolio_id", existing_type=sa.Integer(), nullable=False)
        op.drop_constraint(
            op.f("fk_comments_strategy_id_strategies"), "comments", type_="foreignkey"
        )
        op.drop_column("comments", "strategy_id")
