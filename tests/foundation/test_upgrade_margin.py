"""A database at 0014_3 (before isolated margin and hedge mode) upgrades in place on the service's
own engine (SQLite with foreign keys on): its portfolios are one-way and cross, its positions
BOTH-side and cross with nothing isolated, its ledger and resting orders as they were."""

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from papertrade.config import Settings
from tests.conftest import bearer, client_for, running_app
from tests.foundation.old_database import old_account

BEFORE = "0014_3"
THOUSAND = 1000 * 10**8


async def _write_before(url: str) -> tuple[str, int]:
    engine = create_async_engine(url)
    try:
        key, pid = await old_account(engine, BEFORE, "margin@example.com", 1000)
        async with engine.begin() as connection:
            await connection.execute(
                text(
                    "INSERT INTO ledger_entries (portfolio_id, kind, amount, balance_after, note, "
                    "created_at) VALUES (:p, 'deposit', :k, :k, 'initial balance', 1)"
                ),
                {"p": pid, "k": THOUSAND},
            )
            await connection.execute(
                text(
                    "INSERT INTO positions (portfolio_id, symbol, quantity, entry_price, "
                    "leverage, realized_pnl, updated_at) VALUES (:p, 'BTCUSDT', 1000000, "
                    "6000000000000, 10, 0, 1)"
                ),
                {"p": pid},
            )
        return key, pid
    finally:
        await engine.dispose()


async def test_a_database_before_margin_modes_upgrades_in_place(
    isolated_settings: Settings,
) -> None:
    key, pid = await _write_before(isolated_settings.database_url)
    async with running_app(isolated_settings) as app, client_for(app) as client:  # migrates
        headers = bearer(key)
        mode = await client.get(f"/v1/portfolios/{pid}/position-mode", headers=headers)
        assert mode.json() == {"hedge": False}
        (position,) = (await client.get(f"/v1/portfolios/{pid}/positions", headers=headers)).json()
        assert (position["symbol"], position["quantity"], position["leverage"]) == (
            "BTCUSDT",
            0.01,
            10,
        )
        assert (position["position_side"], position["margin_type"]) == ("BOTH", "cross")
        assert position["isolated_margin"] == 0
        ledger = (await client.get(f"/v1/portfolios/{pid}/ledger", headers=headers)).json()
        assert [(e["kind"], e["amount"]) for e in ledger] == [("deposit", 1000)]
        account = (await client.get(f"/v1/portfolios/{pid}/equity", headers=headers)).json()
        assert account["balance"] == account["ledger_balance"] == 1000
        # The upgraded database takes the new settings.
        switched = await client.put(
            f"/v1/portfolios/{pid}/margin-type",
            json={"symbol": "ETHUSDT", "margin_type": "isolated"},
            headers=headers,
        )
        assert switched.status_code == 200, switched.text
