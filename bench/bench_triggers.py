"""Conditional orders triggered by one tick: 10,000 waiting stops placed as market orders
(SQLite, in-process engine), from the tick to the committed orders, fills and ledger rows."""

import asyncio
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from inprocess import scheduled_runs_settled
from server import machine
from sqlalchemy import func, insert, select

from papertrade.app import create_app
from papertrade.config import Settings
from papertrade.models import ConditionalOrder, Order, Portfolio, User

QUIET_JOBS: dict[str, Any] = {
    "attestation_every_s": 0,
    "ots_upgrade_every_s": 0,
    "tron_anchor_every_s": 0,
    "mail_digest_every_s": 0,
    "recharge_poll_s": 0,
    "live_reconcile_every_s": 0,
}
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
            # The scheduled jobs run their first pass at start-up, and the attestation's goes
            # through all 1,000 portfolios one by one: off, so the tick is measured alone.
            **QUIET_JOBS,
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
            await scheduled_runs_settled(app)
            # CPU time of the whole process (the event loop and SQLite's writer thread): on a
            # shared, loaded machine it says more than the wall time.
            started, cpu_started = time.perf_counter(), time.process_time()
            await ctx.market.set_price("BTCUSDT", Decimal(58000))  # triggers every stop
            elapsed = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
            async with ctx.db.reader() as session:
                waiting = await session.scalar(
                    select(func.count()).where(ConditionalOrder.is_open.is_(True))
                )
                filled = await session.scalar(select(func.count()).where(Order.status == "filled"))
                outcomes = (
                    await session.execute(
                        select(
                            ConditionalOrder.status, ConditionalOrder.reason, func.count()
                        ).group_by(ConditionalOrder.status, ConditionalOrder.reason)
                    )
                ).all()
    if filled != ORDERS:  # a benchmark of refusals measures nothing
        raise SystemExit(f"only {filled} of {ORDERS} stops became filled orders: {outcomes}")
    print(f"Machine: {machine()}; SQLite, in-process engine, {PORTFOLIOS} portfolios\n")
    print(
        "| conditional orders triggered | tick to committed orders (s, wall) | CPU (s) "
        "| orders/s (CPU) | filled | left waiting |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {ORDERS:,} | {elapsed:.2f} | {cpu:.2f} | {ORDERS / cpu:,.0f} | {filled:,} | {waiting} |"
    )


if __name__ == "__main__":
    asyncio.run(main())
