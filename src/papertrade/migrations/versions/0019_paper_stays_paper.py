"""paper stays paper: profit shares go to a leader's portfolio, and wallet credit that came from
portfolios is reversed (issue 30)

Revision ID: 0019_paper_stays_paper
Revises: 0018_email_user_index

Schema: a leader chooses the portfolio that receives their copy-trading profit shares
(`copy_leaders.payout_portfolio_id`, NULL: the copied portfolio itself), and each settlement
records where its fee went (`copy_settlements.payout_portfolio_id`, NULL on the older ones,
whose fee went to the wallet). SQLite copies `copy_leaders`, which nothing references.

Data (docs/wallet.md, "Paper money taken back out of wallets"): the wallet holds real money only,
so every wallet gets back out what came in from portfolios. For each wallet, `from portfolios`
is the sum of its transfers out of portfolios (`wallet_transfer` rows with a positive amount)
and its copy-trading profit shares (`profit_share` rows); what the wallet sent into portfolios
(`wallet_transfer` rows with a negative amount) is subtracted, as that money became paper again.
What remains, at most the wallet's balance (a wallet is never negative), leaves the wallet in one
`paper_reversal` row whose note says how much came from portfolios and how much of it had
already been spent (on tiers or subscriptions; that is not chased). A wallet with nothing from
portfolios gets no row. Exact: amounts are the stored integers (units of 10^-8).
"""

import time
from collections.abc import Sequence
from decimal import Decimal

import sqlalchemy as sa
from alembic import op

revision: str = "0019_paper_stays_paper"
down_revision: str | None = "0018_email_user_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SCALE = 10**8  # DecimalType keeps units of 10^-8
KIND = "paper_reversal"
ACTOR = "migration:0019_paper_stays_paper"
REFERENCE = "issue:30"


def _usdt(units: int) -> str:
    return f"{Decimal(units) / SCALE:.6f}"


def _note(came_in: int, reversed_units: int) -> str:
    note = (
        f"paper money taken back: {_usdt(came_in)} USDT came into this wallet from portfolios "
        "(transfers out of portfolios, copy profit shares); the wallet holds real money only"
    )
    spent = came_in - reversed_units
    if spent > 0:
        note += f"; {_usdt(spent)} of it was already spent"
    return note[:200]


def _reverse_paper_credit() -> None:
    connection = op.get_bind()
    rows = connection.execute(
        sa.text(
            "SELECT w.id, w.balance, "
            "COALESCE(SUM(CASE WHEN (e.kind = 'wallet_transfer' AND e.amount > 0) "
            "OR e.kind = 'profit_share' THEN e.amount ELSE 0 END), 0), "
            "COALESCE(SUM(CASE WHEN e.kind = 'wallet_transfer' AND e.amount < 0 "
            "THEN -e.amount ELSE 0 END), 0) "
            "FROM wallets w JOIN wallet_entries e ON e.wallet_id = w.id "
            "GROUP BY w.id, w.balance ORDER BY w.id"
        )
    ).all()
    now = int(time.time() * 1000)
    for wallet_id, balance, paper_in, sent_back in rows:
        came_in = max(0, int(paper_in) - int(sent_back))
        if came_in == 0:
            continue
        taken = min(int(balance), came_in)
        after = int(balance) - taken
        connection.execute(
            sa.text(
                "INSERT INTO wallet_entries (wallet_id, kind, amount, balance_after, "
                "portfolio_id, reference, actor, note, created_at) VALUES (:w, :kind, :amount, "
                ":after, NULL, :reference, :actor, :note, :now)"
            ),
            {
                "w": wallet_id,
                "kind": KIND,
                "amount": -taken,
                "after": after,
                "reference": REFERENCE,
                "actor": ACTOR,
                "note": _note(came_in, taken),
                "now": now,
            },
        )
        connection.execute(
            sa.text("UPDATE wallets SET balance = :after, updated_at = :now WHERE id = :w"),
            {"after": after, "now": now, "w": wallet_id},
        )


def upgrade() -> None:
    with op.batch_alter_table("copy_leaders") as batch_op:
        batch_op.add_column(sa.Column("payout_portfolio_id", sa.Integer(), nullable=True))
        batch_op.create_foreign_key(
            "fk_copy_leaders_payout_portfolio_id_portfolios",
            "portfolios",
            ["payout_portfolio_id"],
            ["id"],
            ondelete="SET NULL",
        )
    op.add_column(
        "copy_settlements", sa.Column("payout_portfolio_id", sa.BigInteger(), nullable=True)
    )
    _reverse_paper_credit()


def downgrade() -> None:
    connection = op.get_bind()
    connection.execute(
        sa.text(
            "UPDATE wallets SET balance = balance - (SELECT COALESCE(SUM(e.amount), 0) "
            "FROM wallet_entries e WHERE e.wallet_id = wallets.id AND e.kind = :kind)"
        ),
        {"kind": KIND},
    )
    connection.execute(sa.text("DELETE FROM wallet_entries WHERE kind = :kind"), {"kind": KIND})
    with op.batch_alter_table("copy_settlements") as batch_op:
        batch_op.drop_column("payout_portfolio_id")
    with op.batch_alter_table("copy_leaders") as batch_op:
        batch_op.drop_constraint(
            "fk_copy_leaders_payout_portfolio_id_portfolios", type_="foreignkey"
        )
        batch_op.drop_column("payout_portfolio_id")
