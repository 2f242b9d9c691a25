"""1,000 deployed DSL strategies on one symbol: from a bar's close to the last of their orders
acknowledged (SQLite, in-process app, simulated market).

Each strategy is different (its own SMA period) and always fires (`sma(n) > 0`), so every
deployment places a market order and records its signal. The deployments are set as having
seen the current bar; the app's own scheduled job (strategies.evaluate_live, which waits for
the next bar's close) then evaluates them all and places their orders in one unit of work
(strategies/placing.py: place_all, signals in bulk). Measured: from the bar's close (the minute
boundary) to the publication of the last `signal.strategy` event, which happens after the commit
of the unit of work that placed the order (so: every order acknowledged), and the process's CPU
time over the same span (all threads), the figure to trust on a loaded machine.

`--warm`: each portfolio already has its BTCUSDT position row (flat, leverage 1), as a portfolio
that traded the symbol before; without it the first bar also creates 1,000 position rows.

    python bench/bench_live_strategies.py [--deployments 1000] [--warm]
"""

import argparse
import asyncio
import contextlib
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
from papertrade.models import (
    Portfolio,
    Position,
    Strategy,
    StrategyDeployment,
    StrategySignal,
    StrategyVersion,
    User,
)
from papertrade.strategies import live
from papertrade.strategies.validate import summarize

SOURCE = "symbol BTCUSDT\ntimeframe 1m\nwhen sma({period}) > 0 then buy 0.002 qty\n"


async def main(count: int, warm: bool) -> None:
    with tempfile.TemporaryDirectory() as var:
        settings = Settings(
            var_dir=Path(var),
            market_source="sim",
            secret_key="bench",
            public_base_url="http://127.0.0.1:8000",
            tiers_enforced=False,  # one user with a thousand portfolios (free allows 2)
        )
        app = create_app(settings)
        async with app.router.lifespan_context(app):
            ctx = app.state.ctx
            # The scheduler's first pass of every job, evaluate_live's among them, is over: it
            # is not the one that takes the deployments (the next is an hour away).
            await scheduled_runs_settled(app)
            # the newest closed bar counts as seen: the close of the bar in progress is measured
            if 60 - time.time() % 60 < 15:  # too close to it to set 1,000 deployments up
                await asyncio.sleep(60 - time.time() % 60 + 0.5)
            bar_open = live.newest_closed_open("1m", int(time.time() * 1000))
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
                            "last_bar_ms": bar_open,
                        }
                        for s, p in zip(strategies, portfolios, strict=True)
                    ],
                )
                if warm:
                    await session.execute(
                        insert(Position),
                        [
                            {
                                "portfolio_id": p,
                                "symbol": "BTCUSDT",
                                "quantity": Decimal(0),
                                "entry_price": Decimal(0),
                                "realized_pnl": Decimal(0),
                                "leverage": 1,
                            }
                            for p in portfolios
                        ],
                    )
            published: list[tuple[float, int]] = []  # (wall clock, signals in the publication)
            all_in = asyncio.Event()

            async def on_events(events: Any) -> None:
                n = sum(1 for e in events if e.type == "signal.strategy")
                if n:
                    published.append((time.time(), n))
                    if sum(k for _, k in published) >= count:
                        all_in.set()

            ctx.events.subscribe(on_events)
            close_s = (bar_open + 120_000) / 1000  # the close of the bar after it
            await asyncio.sleep(max(0.0, close_s - time.time()))
            cpu_at_close = time.process_time()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(all_in.wait(), 120)
            cpu = time.process_time() - cpu_at_close
            seen = sum(n for _, n in published)
            last_s = max((t for t, _ in published), default=float("nan"))
            first_s = min((t for t, _ in published), default=float("nan"))
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
        "| deployments | positions | signals acknowledged | executed | bar close → first ack, s "
        "| bar close → last ack, s | CPU (all threads), s |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|")
    print(
        f"| {count:,} | {'existing' if warm else 'created'} | {seen:,} | {executed:,} | "
        f"{first_s - close_s:.2f} | {last_s - close_s:.2f} | {cpu:.2f} |"
    )
    print("\nTarget: every order acknowledged within 1 s of the bar close.")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--deployments", type=int, default=1000)
    parser.add_argument("--warm", action="store_true")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.deployments, arguments.warm))
