"""LIMIT fills applied when one tick crosses 10,000 resting orders (SQLite, in-process engine)."""

import asyncio
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from inprocess import scheduled_runs_settled
from server import machine
from sqlalchemy import insert, select

from papertrade.app import create_app
from papertrade.config import Settings
from papertrade.models import Order, Portfolio, User

ORDERS = 10_000
PORTFOLIOS = 1_000


async def main() -> None:
    with tempfile.TemporaryDirectory() as var:
        settings = Settings(
            var_dir=Path(var),
            market_source="sim",
            sim_tick_ms=3_600_000,
            secret_key="bench",
            public_base_url="http://127.0.0.1:8000",
            tiers_enforced=False,  # one user with a thousand portfolios (free allows 2)
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            ctx = app.state.ctx
            await ctx.market.set_price("BTCUSDT", Decimal(60000))
            async with ctx.transaction() as uow:
                session = uow.session
                session.add(User(email="bench@example.com", password_hash="x"))
                await session.flush()
                user_id = await session.scalar(select(User.id))
                await session.execute(
                    insert(Portfolio),
                    [
                        {
                            "user_id": user_id,
                            "name": f"p{i}",
                            "initial_balance": Decimal(10**7),
                            "balance": Decimal(10**7),
                            "maker_fee_rate": Decimal("0.0002"),
                            "taker_fee_rate": Decimal("0.0005"),
                        }
                        for i in range(PORTFOLIOS)
                    ],
                )
                ids = list(await session.scalars(select(Portfolio.id)))
                await session.execute(
                    insert(Order),
                    [
                        {
                            "portfolio_id": ids[i % PORTFOLIOS],
                            "symbol": "BTCUSDT",
                            "side": "buy",
                            "type": "limit",
                            "action": "open",
                            "time_in_force": "GTC",
                            "status": "new",
                            "is_open": True,
                            "quantity": Decimal("0.001"),
                            "size_usd": Decimal(59),
                            "price": Decimal(59000) - i % 100,
                            "client_order_id": f"b{i}",
                            "reserved_margin": Decimal("2.95"),
                        }
                        for i in range(ORDERS)
                    ],
                )
            async with ctx.db.reader() as session:
                for order in await session.scalars(select(Order).where(Order.is_open.is_(True))):
                    app.state.engine.rest(order)
            await scheduled_runs_settled(app)
            started = time.perf_counter()
            await ctx.market.set_price("BTCUSDT", Decimal(58000))  # crosses every resting buy
            elapsed = time.perf_counter() - started
            async with ctx.db.reader() as session:
                still_open = len(
                    list(await session.scalars(select(Order.id).where(Order.is_open.is_(True))))
                )
    print(f"Machine: {machine()}; SQLite, in-process engine, {PORTFOLIOS} portfolios\n")
    print("| resting orders crossed | time to apply (s) | fills/s | left open |")
    print("|---:|---:|---:|---:|")
    print(f"| {ORDERS:,} | {elapsed:.2f} | {ORDERS / elapsed:,.0f} | {still_open} |")


if __name__ == "__main__":
    asyncio.run(main())
