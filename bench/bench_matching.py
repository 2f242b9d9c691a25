"""Order book benchmark: a tick that crosses nothing, and one that crosses 10,000 orders; then
the same for waiting conditional orders (stops, take-profits: engine/triggers.py).

Run: .venv/bin/python bench/bench_matching.py [sizes...]   (default 1000 100000 1000000)

Books hold resting limits on a 0.1 tick grid within ±2,000 USDT of a 60,000 mark (20,000
price levels a side), each order with its own price Decimal as if loaded from storage.
"""

import gc
import os
import random
import statistics
import sys
import time
import timeit
from decimal import Decimal
from pathlib import Path

from papertrade.engine.triggers import TriggerWatch
from papertrade.trading.book import OrderBook, RestingOrder
from papertrade.trading.enums import Side
from papertrade.trading.values import Quote

MARK_TICKS = 600_000  # 60,000.0 in 0.1 ticks
LEVELS = 20_000  # per side
CROSS_TARGET = 10_000
QUANTITIES = [Decimal("0.001"), Decimal("0.010"), Decimal("0.250"), Decimal("1.000")]


def rss_bytes() -> int | None:
    """Current resident set size (Linux), None elsewhere."""
    statm = Path("/proc/self/statm")
    if not statm.exists():
        return None
    return int(statm.read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def build(size: int, rng: random.Random) -> tuple[OrderBook, list[RestingOrder]]:
    """A book of `size` resting orders, half bids below the mark, half asks above."""
    book = OrderBook("BTCUSDT")
    orders: list[RestingOrder] = []
    for order_id in range(size):
        offset = rng.randrange(1, LEVELS + 1)
        side = Side.BUY if order_id % 2 == 0 else Side.SELL
        ticks = MARK_TICKS - offset if side is Side.BUY else MARK_TICKS + offset
        price = Decimal(ticks).scaleb(-1)
        order = RestingOrder(
            order_id, order_id % 1000, side, price, rng.choice(QUANTITIES), order_id
        )
        book.add(order)
        orders.append(order)
    return book, orders


def no_cross_ns(book: OrderBook) -> float:
    """Median ns per `crossed()` call at the mark, where nothing rests."""
    mark = Decimal(MARK_TICKS).scaleb(-1)
    assert book.crossed(mark) == []
    calls = 2_000
    runs = timeit.repeat(lambda: book.crossed(mark), number=calls, repeat=100)
    return statistics.median(runs) / calls * 1e9


def cross_price(orders: list[RestingOrder]) -> Decimal:
    """The bid price at which about CROSS_TARGET of the best bids are reached."""
    bids = sorted((o.price for o in orders if o.side is Side.BUY), reverse=True)
    return bids[min(CROSS_TARGET, len(bids)) - 1]


def crossing(book: OrderBook, price: Decimal, repeats: int = 5) -> tuple[int, float]:
    """(orders crossed, median seconds) of one tick at `price`; crossed orders are put back."""
    times: list[float] = []
    count = 0
    for _ in range(repeats):
        start = time.perf_counter()
        crossed = book.crossed(price)
        times.append(time.perf_counter() - start)
        count = len(crossed)
        for order in crossed:
            book.add(order)
    return count, statistics.median(times)


def remove_us(book: OrderBook, orders: list[RestingOrder], rng: random.Random) -> float:
    """Median µs to remove (and re-add outside the timing) a random resting order."""
    samples: list[float] = []
    for order in rng.sample(orders, min(2_000, len(orders))):
        start = time.perf_counter_ns()
        book.remove(order.order_id)
        samples.append((time.perf_counter_ns() - start) / 1000)
        book.add(order)
    return statistics.median(samples)


def run(size: int) -> str:
    """Benchmark one book size and return its markdown table row."""
    rng = random.Random(size)
    gc.collect()
    before = rss_bytes()
    start = time.perf_counter()
    book, orders = build(size, rng)
    built = time.perf_counter() - start
    after = rss_bytes()
    memory = "n/a"
    if before is not None and after is not None:
        memory = f"{(after - before) / 2**20:,.0f} MB ({(after - before) / size:,.0f} B/order)"
    gc.freeze()  # keep the cyclic GC from rescanning a million long-lived orders mid-timing
    idle = no_cross_ns(book)
    count, cross_s = crossing(book, cross_price(orders))
    removal = remove_us(book, orders, rng)
    gc.unfreeze()
    return (
        f"| {size:>9,} | {built:6.2f} s | {memory} | {idle:7.0f} | "
        f"{count:>6,} | {cross_s * 1e3:7.2f} | {cross_s / count * 1e6:5.2f} | {removal:5.2f} |"
    )


def quote(ticks: int) -> Quote:
    price = Decimal(ticks).scaleb(-1)
    return Quote("BTCUSDT", price, price, price, Decimal(0), 0, 0)


def watch_triggers(size: int, rng: random.Random) -> TriggerWatch:
    """`size` waiting stops and take-profits, half on each watched price (mark, last), half
    triggering on a fall and half on a rise, within ±2,000 USDT of the mark."""
    watch = TriggerWatch()
    for conditional_id in range(size):
        offset = rng.randrange(1, LEVELS + 1)
        side = "sell" if conditional_id % 2 == 0 else "buy"
        # A sell stop triggers on a fall (below the mark), a buy stop on a rise (above it).
        ticks = MARK_TICKS - offset if side == "sell" else MARK_TICKS + offset
        watch.watch(
            {
                "id": conditional_id,
                "portfolio_id": conditional_id % 1000,
                "symbol": "BTCUSDT",
                "side": side,
                "type": "stop_market",
                "working_type": "MARK_PRICE" if conditional_id % 4 < 2 else "CONTRACT_PRICE",
                "trigger_price": Decimal(ticks).scaleb(-1),
                "reduce_only": True,
                "callback_rate": None,
                "activation_price": None,
            }
        )
    return watch


def trigger_run(size: int) -> str:
    """A tick that triggers none of `size` waiting conditional orders, then one that triggers
    about 10,000: the markdown table row."""
    rng = random.Random(size)
    start = time.perf_counter()
    watch = watch_triggers(size, rng)
    built = time.perf_counter() - start
    gc.freeze()
    idle_quote = quote(MARK_TICKS)
    assert watch.reached(idle_quote) is None
    calls = 2_000
    runs = timeit.repeat(lambda: watch.reached(idle_quote), number=calls, repeat=100)
    idle = statistics.median(runs) / calls * 1e9
    falls = sorted(
        (r.price for books in watch.books.values() for r in books["BTCUSDT"].bids()),
        reverse=True,
    )
    level = falls[min(CROSS_TARGET, len(falls)) - 1]
    start = time.perf_counter()
    fired = watch.reached(quote(int(level.scaleb(1))))
    took = time.perf_counter() - start
    gc.unfreeze()
    count = len(fired.ids) if fired is not None else 0
    return (
        f"| {size:>9,} | {built:6.2f} s | {idle:7.0f} | {count:>6,} | {took * 1e3:7.2f} | "
        f"{took / max(count, 1) * 1e6:5.2f} |"
    )


def main(argv: list[str]) -> None:
    """Print the benchmark tables for the requested book sizes."""
    sizes = [int(arg) for arg in argv] or [1_000, 100_000, 1_000_000]
    print(
        "| resting orders | build | memory (RSS Δ) | no-cross tick, ns (median) "
        "| crossed by one tick | that tick, ms | µs per crossed order | remove, µs (median) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        print(run(size), flush=True)
    print()
    print(
        "| waiting conditional orders | build | no-trigger tick, ns (median) "
        "| triggered by one tick | that tick, ms | µs per triggered order |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        print(trigger_run(size), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
