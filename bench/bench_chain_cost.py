"""What chain upkeep adds to the order path: CPU per MARKET order (this process, every thread)
with the service's outbox consumers as it runs them, with and without the chain's, SQLite, 16
orders in flight. Each round lasts until the consumers have handled its last event, so their
CPU is in the figure (target: the chain adds at most 5 %). Alternating runs, best and median
round of each, net of the idle process's background (bench_order_cpu.py).
"""

import asyncio
import statistics
import sys
import tempfile
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_order_cpu import IN_FLIGHT, _drained, _settings, idle_rate, timed

from papertrade.app import create_app
from papertrade.auth.principal import Principal
from papertrade.chain.consumers import CHAIN
from papertrade.orders.commands import PlaceOrder
from papertrade.outbox.catalogue import CONSUMERS
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.trading.enums import OrderType, Side
from papertrade.uow import AsyncWork
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
                # A loaded machine may take longer than the staleness limit over a round.
                await app.state.ctx.market.set_price("BTCUSDT", Decimal(60000))
                await asyncio.gather(
                    *(state.orders.place(principal, command) for _ in range(IN_FLIGHT))
                )
            await _drained(app)  # the round includes the consumers' work for its fills

        await place(320)
        rate = await idle_rate(app)
        figures = []
        for _ in range(ROUNDS):
            net, _background = await timed(app, rate, place(PER_ROUND))
            figures.append(net / PER_ROUND * 1e6)
        await user.client.aclose()
    return figures


async def _nothing(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
    return None


# The same name as the chain's: the same cursor, the same start (the whole history).
DELIVERY_ONLY = Consumer(CHAIN.name, _nothing, from_start=True, own_tables_only=True)


async def main() -> None:
    others = tuple(c for c in CONSUMERS if c.name != CHAIN.name)
    setups: dict[str, tuple[Consumer, ...]] = {
        "every consumer but the chain": others,
        "every consumer (the service as it runs)": CONSUMERS,
        "only a consumer that does nothing (the outbox's delivery)": (DELIVERY_ONLY,),
        "only the chain consumer": (CHAIN,),
    }
    figures: dict[str, list[float]] = {name: [] for name in setups}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(2):
            for index, (name, consumers) in enumerate(setups.items()):
                figures[name] += await _measure(Path(tmp), f"s{index}r{run}", consumers)
    print(f"SQLite, {IN_FLIGHT} in flight, 2 × {ROUNDS} rounds of {PER_ROUND} orders; CPU time")
    print("(the machine may be shared); copy trading's and the waitlist's consumers always run\n")
    print("| outbox consumers | CPU per order, best | median |")
    print("|---|---:|---:|")
    for name, values in figures.items():
        print(f"| {name} | {min(values):.0f} µs | {statistics.median(values):.0f} µs |")
    for what, base_name, chain_name in (
        ("the service's order path", "every consumer but the chain", list(setups)[1]),
        ("delivery alone", list(setups)[2], "only the chain consumer"),
    ):
        base, chain = figures[base_name], figures[chain_name]
        best = 100 * (min(chain) / min(base) - 1)
        median = 100 * (statistics.median(chain) / statistics.median(base) - 1)
        print(f"\nchain upkeep adds {best:.1f} % (best rounds), {median:.1f} % (medians) to {what}")


if __name__ == "__main__":
    asyncio.run(main())
