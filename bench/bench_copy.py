"""Copy trading fan-out: a leader with N followers (1,000 by default) places a MARKET order; the
time from the leader's acknowledgement to the commit of the last follower's copied fill.

Run: .venv/bin/python bench/bench_copy.py [--followers 1000] [--rounds 20]

The real app runs in this process (simulated market, a throwaway SQLite database) and is driven
over its ASGI interface. Followers are real users (20 copies each, the per-user limit) with one
portfolio per relation, `multiplier` 1, following a public leader. Each round the leader buys
or sells 0.01 BTC (opens and full closes alternate, so the closes mirror proportionally). The
clock stops when the event bus publishes, after their commit, the `order.filled` event of the
last of the N follower orders that mirror the leader's order (the outbox consumer places them in
its unit of work, through place_all).
"""

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from papertrade.events import DomainEvent
from papertrade.orders.events import OrderFilled
from tests.conftest import make_settings, running_app, sign_up
from tests.trading_api.helpers import set_price

PER_USER = 20


async def bench(followers: int, rounds: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory() as var:
        settings = make_settings(
            f"sqlite+aiosqlite:///{var}/copy.db",
            Path(var),
            rate_limit_session_per_min=10**9,
            rate_limit_api_key_per_min=10**9,
        )
        async with running_app(settings) as app:
            await set_price(app, "BTCUSDT", "50000")
            leader = await sign_up(app)
            led = await leader.portfolio(name="lead", visibility="public", initial_balance="100000")
            copies: set[int] = set()
            for start in range(0, followers, PER_USER):
                user = await sign_up(app)
                for _ in range(min(PER_USER, followers - start)):
                    mine = await user.portfolio(name="copy", initial_balance="10000")
                    response = await user.post(
                        "/v1/copy/relations",
                        json={
                            "leader_portfolio_id": led["id"],
                            "portfolio_id": mine["id"],
                            "mode": "multiplier",
                            "multiplier": 1,
                            "allocation": 1000,
                        },
                    )
                    assert response.status_code == 201, response.text
                    copies.add(mine["id"])
            print(f"{followers} followers ready", file=sys.stderr)

            filled: set[int] = set()
            done = asyncio.Event()

            async def watch(events: Sequence[DomainEvent]) -> None:
                for event in events:
                    if isinstance(event, OrderFilled) and event.portfolio_id in copies:
                        filled.add(event.portfolio_id)
                if len(filled) == len(copies):
                    done.set()

            app.state.ctx.events.subscribe(watch)
            timings: list[float] = []
            cpu: list[float] = []  # this process's CPU time per round: steadier on a busy machine
            for i in range(rounds):
                filled.clear()
                done.clear()
                side = "buy" if i % 2 == 0 else "sell"
                body = {
                    "portfolio_id": led["id"],
                    "symbol": "BTCUSDT",
                    "side": side,
                    "type": "market",
                    "quantity": "0.01",
                }
                cpu_start = time.process_time()
                response = await leader.post("/v1/order", json=body)
                acknowledged = time.perf_counter()
                assert response.status_code == 201, response.text
                await asyncio.wait_for(done.wait(), 60)
                timings.append(time.perf_counter() - acknowledged)
                cpu.append(time.process_time() - cpu_start)
                print(
                    f"round {i + 1}: {timings[-1] * 1000:.0f} ms (CPU {cpu[-1] * 1000:.0f} ms)",
                    file=sys.stderr,
                )
            return timings, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--followers", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    walls, cpus = asyncio.run(bench(args.followers, args.rounds))
    timings = sorted(walls)
    p50 = statistics.median(timings)
    p99 = timings[min(len(timings) - 1, round(0.99 * (len(timings) - 1)))]
    print("| followers | rounds | p50 ms | p99 ms | max ms | CPU p50 ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.followers:,} | {args.rounds} | {p50 * 1000:.0f} | {p99 * 1000:.0f} | "
        f"{timings[-1] * 1000:.0f} | {statistics.median(cpus) * 1000:.0f} |"
    )


if __name__ == "__main__":
    main()
