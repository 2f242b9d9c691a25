"""What chain upkeep adds to the order path: CPU per MARKET order (this process, every thread)
with the outbox's chain consumer off and on, SQLite, 16 orders in flight. With it on, the
consumer hashes each fill into the portfolio's chain during the same rounds, so its CPU is in
the figure (target: at most 5 % more). Alternating runs, best round of each.
"""

import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_order_cpu import IN_FLIGHT, _settings

from papertrade.app import create_app
from papertrade.auth.principal import Principal
from papertrade.chain.consumers import CHAIN
from papertrade.orders.commands import PlaceOrder
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.trading.enums import OrderType, Side
from papertrade.uow import AsyncWork
from tests.chain.helpers import chained
from tests.conftest import sign_up

ROUNDS = 5
PER_ROUND = 480


async def _measure(var: Path, name: str, consumers: Sequence[Consumer]) -> list[float]:
    settings = _settings(f"sqlite+aiosqlite:///{var}/{name}.db", var)
    app = create_app(settings, consumers=consumers)
    async with app.router.lifespan_context(app):
        user = await sign_up(app)
        pid = (await user.portfolio(initial_balance="100000000"))["id"]
        await app.state.ctx.market.set_price("BTCUSDT", Decimal(60000))
        state: Any = app.state
        principal = Principal("session", user.profile["id"], 1)
        command = PlaceOrder(pid, "BTCUSDT", Side.BUY, OrderType.MARKET, quantity=Decimal("0.002"))

        async def place(count: int) -> None:
            for _ in range(count // IN_FLIGHT):
                await asyncio.gather(
                    *(state.orders.place(principal, command) for _ in range(IN_FLIGHT))
                )
            if consumers:
                await chained(app)  # the round includes hashing its fills

        await place(320)
        figures = []
        for _ in range(ROUNDS):
            started = time.process_time()
            await place(PER_ROUND)
            figures.append((time.process_time() - started) / PER_ROUND * 1e6)
        await user.client.aclose()
    return figures


async def _nothing(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    return None


# The same name as the chain's, so the helper that waits for the cursor waits for this one too.
DELIVERY_ONLY = Consumer(CHAIN.name, _nothing, from_start=True, own_tables_only=True)


async def main() -> None:
    setups: dict[str, tuple[Consumer, ...]] = {
        "no consumer": (),
        "a consumer that does nothing (the outbox's delivery)": (DELIVERY_ONLY,),
        "the chain consumer": (CHAIN,),
    }
    figures: dict[str, list[float]] = {name: [] for name in setups}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(2):
            for index, (name, consumers) in enumerate(setups.items()):
                figures[name] += await _measure(Path(tmp), f"s{index}r{run}", consumers)
    print(f"SQLite, {IN_FLIGHT} in flight, 2 × {ROUNDS} rounds of {PER_ROUND} orders\n")
    print("| outbox consumers | CPU per order, best | median |")
    print("|---|---:|---:|")
    for name, values in figures.items():
        print(f"| {name} | {min(values):.0f} µs | {statistics.median(values):.0f} µs |")
    base = min(figures["a consumer that does nothing (the outbox's delivery)"])
    chain = min(figures["the chain consumer"])
    print(f"\nchain upkeep adds {100 * (chain / base - 1):.1f} % over delivery alone (best rounds)")


if __name__ == "__main__":
    asyncio.run(main())
