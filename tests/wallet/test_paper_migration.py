"""Migration 0019_paper_stays_paper upgrades a database in place (SQLite and PostgreSQL): wallet
credit that came from portfolios (transfers out of portfolios, copy profit shares) is taken back
out with a `paper_reversal` row that says why; a round trip to a portfolio nets out; what was
already spent is not chased; a wallet of real money only is untouched (issue 30, docs/wallet.md)."""

from decimal import Decimal
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from papertrade.config import Settings
from tests.conftest import bearer, client_for, running_app
from tests.foundation.old_database import SCALE, old_account

BEFORE = "0018_email_user_index"


async def _wallet(engine: AsyncEngine, email: str, rows: list[tuple[str, str]]) -> None:
    """A wallet as the old release left it: `rows` of (kind, amount), balances running."""
    async with engine.begin() as connection:
        uid = (
            await connection.execute(text("SELECT id FROM users WHERE email = :e"), {"e": email})
        ).scalar_one()
        total = sum(Decimal(amount) for _, amount in rows)
        wid = (
            await connection.execute(
                text(
                    "INSERT INTO wallets (user_id, balance, created_at, updated_at) "
                    "VALUES (:u, :b, 1, 1) RETURNING id"
                ),
                {"u": uid, "b": int(total * SCALE)},
            )
        ).scalar_one()
        running = Decimal(0)
        for n, (kind, amount) in enumerate(rows, start=1):
            running += Decimal(amount)
            await connection.execute(
                text(
                    "INSERT INTO wallet_entries (wallet_id, kind, amount, balance_after, "
                    "portfolio_id, reference, actor, note, created_at) VALUES (:w, :k, :a, :after, "
                    "NULL, NULL, 'user', '', :t)"
                ),
                {
                    "w": wid,
                    "k": kind,
                    "a": int(Decimal(amount) * SCALE),
                    "after": int(running * SCALE),
                    "t": n,
                },
            )


async def _read(app: Any, key: str) -> tuple[Decimal, list[dict[str, Any]]]:
    async with client_for(app, headers=bearer(key)) as client:
        wallet = (await client.get("/v1/user/wallet")).json()
        assert wallet["balance"] == wallet["ledger_balance"]  # the ledger still adds up
        rows = (await client.get("/v1/user/wallet/ledger")).json()
    return Decimal(str(wallet["balance"])), rows


async def test_paper_credit_in_wallets_is_taken_back_with_a_row_that_says_why(
    isolated_settings: Settings,
) -> None:
    engine = create_async_engine(isolated_settings.database_url)
    try:
        keys = {}
        for who in ("minter", "leader", "roundtrip", "honest"):
            keys[who], _ = await old_account(engine, BEFORE, f"{who}@example.com", 1000, "read")
        # Minted 5,000 by a top-up, moved it into the wallet, bought a 15 USDT tier.
        await _wallet(
            engine,
            "minter@example.com",
            [("wallet_transfer", "5000"), ("tier_payment", "-15")],
        )
        # Real 20, profit shares of 2.5 and 0.000001 into the wallet.
        await _wallet(
            engine,
            "leader@example.com",
            [("recharge", "20"), ("profit_share", "2.5"), ("profit_share", "0.000001")],
        )
        # Real 100 into a portfolio and back out: nothing came from portfolios in the end.
        await _wallet(
            engine,
            "roundtrip@example.com",
            [("recharge", "100"), ("wallet_transfer", "-100"), ("wallet_transfer", "100")],
        )
        await _wallet(engine, "honest@example.com", [("recharge", "50"), ("subscription", "7")])
    finally:
        await engine.dispose()

    async with running_app(isolated_settings) as app:  # migrates to head
        balance, rows = await _read(app, keys["minter"])
        assert balance == 0
        reversal = rows[0]
        assert (reversal["kind"], reversal["amount"], reversal["balance_after"]) == (
            "paper_reversal",
            -4985,
            0,
        )
        assert reversal["actor"] == "migration:0019_paper_stays_paper"
        assert reversal["reference"] == "issue:30"
        assert "5000.000000 USDT came into this wallet from portfolios" in reversal["note"]
        assert "15.000000 of it was already spent" in reversal["note"]

        balance, rows = await _read(app, keys["leader"])
        assert balance == 20
        assert (rows[0]["kind"], Decimal(str(rows[0]["amount"]))) == (
            "paper_reversal",
            Decimal("-2.500001"),
        )
        assert "already spent" not in rows[0]["note"]

        for who, held in (("roundtrip", 100), ("honest", 57)):
            balance, rows = await _read(app, keys[who])
            assert balance == held
            assert "paper_reversal" not in {row["kind"] for row in rows}
