"""A database at 0015_realism_profile (fills without a position side) upgrades in place: each
existing fill takes its order's position side, so a hedge-mode history reads right afterwards."""

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from papertrade.config import Settings
from tests.conftest import bearer, client_for, running_app
from tests.foundation.old_database import SCALE, old_account

BEFORE = "0015_realism_profile"


async def _write_before(url: str) -> tuple[str, int]:
    """A hedge-mode portfolio with a LONG buy and a SHORT sell, and a one-way BOTH buy."""
    engine = create_async_engine(url)
    try:
        key, pid = await old_account(engine, BEFORE, "hedged@example.com", 10_000, "read")
        async with engine.begin() as connection:
            for n, (side, position_side) in enumerate(
                [("buy", "LONG"), ("sell", "SHORT"), ("buy", "BOTH")], start=1
            ):
                order_id = (
                    await connection.execute(
                        text(
                            "INSERT INTO orders (portfolio_id, symbol, side, type, action, "
                            "position_side, time_in_force, status, is_open, quantity, size_usd, "
                            "avg_price, filled_quantity, filled_quote, commission, realized_pnl, "
                            "reserved_margin, client_order_id, source, created_at, updated_at) "
                            "VALUES (:p, 'BTCUSDT', :side, 'market', 'open', :ps, 'GTC', "
                            "'filled', false, :q, :usd, :price, :q, :usd, 0, 0, 0, :cid, 'fapi', "
                            ":t, :t) RETURNING id"
                        ),
                        {
                            "p": pid,
                            "side": side,
                            "ps": position_side,
                            "q": SCALE // 100,
                            "usd": 600 * SCALE,
                            "price": 60_000 * SCALE,
                            "cid": f"old-{n}",
                            "t": n,
                        },
                    )
                ).scalar_one()
                await connection.execute(
                    text(
                        "INSERT INTO fills (order_id, portfolio_id, symbol, side, price, "
                        "quantity, quote_quantity, commission, realized_pnl, liquidity, "
                        "is_liquidation, created_at) VALUES (:o, :p, 'BTCUSDT', :side, :price, "
                        ":q, :usd, 0, 0, 'taker', false, :t)"
                    ),
                    {
                        "o": order_id,
                        "p": pid,
                        "side": side,
                        "price": 60_000 * SCALE,
                        "q": SCALE // 100,
                        "usd": 600 * SCALE,
                        "t": n,
                    },
                )
        return key, pid
    finally:
        await engine.dispose()


async def test_existing_fills_take_their_orders_position_side(
    isolated_settings: Settings,
) -> None:
    key, pid = await _write_before(isolated_settings.database_url)
    async with running_app(isolated_settings) as app, client_for(app) as client:  # migrates
        fills = (await client.get(f"/v1/portfolios/{pid}/fills", headers=bearer(key))).json()
    assert sorted((f["side"], f["position_side"], f["price"]) for f in fills) == [
        ("buy", "BOTH", 60000),
        ("buy", "LONG", 60000),
        ("sell", "SHORT", 60000),
    ]
