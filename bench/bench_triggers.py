"""Conditional orders triggered by one tick: 10,000 waiting stops placed as market orders
(SQLite, in-process engine), from the tick to the committed orders, fills and ledger rows."""

import asyncio
import tempfile
import time
from decimal import Decimal
from pathlib import Path

from server import machine
from sqlalchemy import func, insert, select

from papertrade.app import create_app
from papertrade.config import Settings
from papertrade.models import ConditionalOrder, Order, Portfolio, User

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
                    insert(ConditionalOrder),
                    [
                        {
                            "id": i + 1,
                            "portfolio_id": ids[i % PORTFOLIOS],
                            "symbol": "BTCUSDT",
                            "side": "sell",
                            "type": "stop_market",
                            "working_type": "MARK_PRICE",
                            "trigger_price": Decimal(59000) - i % 100,
                            "quantity": Decimal("0.002"),
                            "close_position": False,
                            "reduce_only": False,
                            "price_protect": False,
                            "time_in_force": "GTC",
                            "status": "new",
                            "is_open": True,
                            "client_algo_id": f"b{i}",
                            "source": "bench",
                            "created_at": 0,
                            "updated_at": 0,
                        }
                        for i in range(ORDERS)
                    ],
                )
            await app.state.engine.pick_up_open_orders(full=True)
            started = time.perf_counter()
            await ctx.market.set_price("BTCUSDT", Decimal(58000))  # triggers every stop
            elapsed = time.perf_counter() - started
            async with ctx.db.reader() as session:
                waiting = await session.scalar(
                    select(func.count()).where(ConditionalOrder.is_open.is_(True))
                )
                filled = await session.scalar(select(func.count()).where(Order.status == "filled"))
    print(f"Machine: {machine()}; SQLite, in-process engine, {PORTFOLIOS} portfolios\n")
    print(
        "| conditional orders triggered | tick to committed orders (s) | orders/s | filled "
        "| left waiting |"
    )
    print("|---:|---:|---:|---:|---:|")
    print(f"| {ORDERS:,} | {elapsed:.2f} | {ORDERS / elapsed:,.0f} | {filled:,} | {waiting} |")


if __name__ == "__main__":
    asyncio.run(main())
