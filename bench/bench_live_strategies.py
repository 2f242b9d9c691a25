"""1,000 deployed DSL strategies on one symbol: one evaluation pass after a bar closes, from the
start of the pass to every order committed (SQLite, in-process app, simulated market).

Each strategy is different (its own SMA period) and always fires (`sma(n) > 0`), so every
deployment places a market order through the common order path (webhook executor, place_one)
and records its signal. The app's scheduled pass is set to hourly, so the measured pass is the
only one.

    python bench/bench_live_strategies.py [--deployments 1000]
"""

import argparse
import asyncio
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from server import machine
from sqlalchemy import func, insert, select

from papertrade.app import create_app
from papertrade.config import Settings
from papertrade.models import (
    JobRecord,
    Portfolio,
    Strategy,
    StrategyDeployment,
    StrategySignal,
    StrategyVersion,
    User,
)
from papertrade.strategies import jobs as strategy_jobs
from papertrade.strategies import live
from papertrade.strategies.validate import summarize

SOURCE = "symbol BTCUSDT\ntimeframe 1m\nwhen sma({period}) > 0 then buy 0.002 qty\n"


async def _first_scheduled_pass(ctx: Any) -> None:
    """The scheduler's first pass runs when it starts; wait for it, so it is not the one that
    takes the deployments (the next is an hour away)."""
    for _ in range(300):
        async with ctx.db.reader() as session:
            done = await session.scalar(
                select(func.count()).where(
                    JobRecord.name == "strategies.evaluate_live", JobRecord.status == "succeeded"
                )
            )
        if done:
            return
        await asyncio.sleep(0.1)


async def main(count: int) -> None:
    with tempfile.TemporaryDirectory() as var:
        settings = Settings(
            var_dir=Path(var),
            market_source="sim",
            secret_key="bench",
            public_base_url="http://127.0.0.1:8000",
        )
        strategy_jobs.LIVE_EVERY_S = 3600  # the measured pass is the only one
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            ctx = app.state.ctx
            await _first_scheduled_pass(ctx)
            async with ctx.transaction() as uow:
                session = uow.session
                session.add(User(email="bench@example.com", password_hash="x"))
                await session.flush()
                user_id = await session.scalar(select(User.id))
                money = {"initial_balance": Decimal(10**6), "balance": Decimal(10**6)}
                fees = {"maker_fee_rate": Decimal("0.0002"), "taker_fee_rate": Decimal("0.0005")}
                await session.execute(
                    insert(Portfolio),
                    [{"user_id": user_id, "name": f"p{i}", **money, **fees} for i in range(count)],
                )
                portfolios = list(
                    await session.scalars(select(Portfolio.id).order_by(Portfolio.id))
                )
                sources = [SOURCE.format(period=5 + i % 100) for i in range(count)]
                await session.execute(
                    insert(Strategy),
                    [{"user_id": user_id, "kind": "dsl", "name": f"s{i}"} for i in range(count)],
                )
                strategies = list(await session.scalars(select(Strategy.id).order_by(Strategy.id)))
                await session.execute(
                    insert(StrategyVersion),
                    [
                        {
                            "strategy_id": s,
                            "number": 1,
                            "source": src,
                            "summary": summarize("dsl", src),
                        }
                        for s, src in zip(strategies, sources, strict=True)
                    ],
                )
                await session.execute(
                    insert(StrategyDeployment),
                    [
                        {
                            "strategy_id": s,
                            "version": 1,
                            "portfolio_id": p,
                            "symbol": "BTCUSDT",
                            "timeframe": "1m",
                            "status": "running",
                        }
                        for s, p in zip(strategies, portfolios, strict=True)
                    ],
                )
            started = time.perf_counter()
            counts = await live.evaluate_due(ctx)
            elapsed = time.perf_counter() - started
            async with ctx.db.reader() as session:
                executed = await session.scalar(
                    select(func.count()).where(StrategySignal.outcome == "executed")
                )
                reasons = (
                    await session.execute(
                        select(
                            StrategySignal.outcome, StrategySignal.reason, func.count()
                        ).group_by(StrategySignal.outcome, StrategySignal.reason)
                    )
                ).all()
    for outcome, reason, n in reasons:
        print(f"{n} {outcome}: {reason[:120]}")
    print(f"Machine: {machine()}; SQLite, in-process app, simulated market\n")
    print(
        "| deployments | signals in the pass | executed (all passes) | pass, s | per signal, ms |"
    )
    print("|---:|---:|---:|---:|---:|")
    signals = max(counts["signals"], 1)
    print(
        f"| {count:,} | {counts['signals']:,} | {executed:,} | {elapsed:.2f} | "
        f"{elapsed / signals * 1000:.2f} |"
    )
    print("\nTarget: every order acknowledged within 1 s of the bar close.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--deployments", type=int, default=1000)
    asyncio.run(main(parser.parse_args().deployments))
