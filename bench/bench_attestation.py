"""The attested track record at 1,000,000 events in one UTC day (docs/attestation.md).

1. chain upkeep: each event's canonical JSON and SHA-256, linked per portfolio (1,000 of them);
2. the day's root straight from memory: leaf hashes and the RFC 6962 tree;
3. the day's root as the job takes it: the 1,000,000 chain entries read back from SQLite in
   (portfolio_id, seq) order, then the tree, and one inclusion proof.

Time and peak memory (RSS of this process) are printed per phase, then what period roots cost
at 100 fills/s with one root an hour (ATTESTATION_ROOT_EVERY_S=3600): each root covers the
360,000 events since the one before, and its cost is this run's per-event cost of a root taken
from the database (reading, hashing and the tree grow linearly with the events). `--events N`
for a smaller run.
"""

import argparse
import asyncio
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import insert

from papertrade import migrate
from papertrade.chain.attest import day_leaves
from papertrade.chain.proofs import (
    GENESIS,
    canonical,
    event_hash,
    inclusion_path,
    iso_ms,
    leaf_hash,
    merkle_root,
)
from papertrade.db import Database
from papertrade.models import ChainEntry

PORTFOLIOS = 1000
HOURLY_EVENTS = 100 * 3600  # 100 fills/s, one root an hour
DAY = "2026-11-24"
DAY_START_MS = 1_763_942_400_000
T = TypeVar("T")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(label: str, work: Callable[[], T], rows: list[tuple[str, float, float]]) -> T:
    start = time.perf_counter()
    result = work()
    rows.append((label, time.perf_counter() - start, peak_mb()))
    return result


def chain_events(count: int) -> list[dict[str, Any]]:
    """`count` fills spread over the portfolios, chained: what the consumer writes."""
    heads = [GENESIS] * PORTFOLIOS
    seqs = [0] * PORTFOLIOS
    entries = []
    for i in range(count):
        p = i % PORTFOLIOS
        seqs[p] += 1
        body = canonical(
            {
                "portfolio_id": p + 1,
                "ref": f"fill:{i + 1}",
                "ts": iso_ms(DAY_START_MS + i * 80),
                "event_type": "fill",
                "symbol": "BTCUSDT",
                "side": "buy" if i % 2 else "sell",
                "qty": "0.001",
                "price": "50123.4",
                "fee": "0.025062",
                "realized_pnl": "0",
                "seq": seqs[p],
                "prev_hash": heads[p],
            }
        )
        heads[p] = event_hash(body)
        entries.append(
            {
                "portfolio_id": p + 1,
                "seq": seqs[p],
                "day": DAY,
                "source": "fill",
                "source_id": i + 1,
                "ts": DAY_START_MS + i * 80,
                "body": body,
                "hash": heads[p],
            }
        )
    return entries


async def from_database(entries: list[dict[str, Any]], rows: list[tuple[str, float, float]]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite+aiosqlite:///{tmp}/bench.db")
        try:
            await migrate.upgrade(db.engine)
            async with db.engine.begin() as conn:
                for first in range(0, len(entries), 50_000):
                    await conn.execute(insert(ChainEntry), entries[first : first + 50_000])
            entries.clear()  # what the job has in memory is what it reads back
            start = time.perf_counter()
            async with db.reader() as session:
                leaves = await day_leaves(session, DAY)
            read = time.perf_counter() - start
            rows.append(("read 1 day's hashes from SQLite", read, peak_mb()))
            tree = timed("leaf hashes", lambda: [leaf_hash(h) for h in leaves.hashes], rows)
            root = timed("Merkle root", lambda: merkle_root(tree), rows)
            timed("one inclusion proof", lambda: inclusion_path(tree, len(tree) // 3), rows)
            total = sum(r[1] for r in rows[-4:])
            rows.append(("daily root from the database, total", total, peak_mb()))
            return root.hex()
        finally:
            await db.dispose()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000)
    args = parser.parse_args()
    rows: list[tuple[str, float, float]] = []
    entries = timed(
        "chain upkeep: canonical JSON + SHA-256", lambda: chain_events(args.events), rows
    )
    # Leaves in the day's order: by portfolio, then seq.
    ordered = [e["hash"] for e in sorted(entries, key=lambda e: (e["portfolio_id"], e["seq"]))]
    memory_root = timed(
        "daily root from memory (leaves + tree)",
        lambda: merkle_root([leaf_hash(h) for h in ordered]),
        rows,
    )
    ordered.clear()
    db_root = asyncio.run(from_database(entries, rows))
    assert db_root == memory_root.hex(), "the database gave another root"
    print(f"{args.events:,} events over {PORTFOLIOS:,} portfolios, root {db_root[:16]}…\n")
    print("| phase | seconds | peak RSS, MB |")
    print("|---|---:|---:|")
    for label, seconds, peak in rows:
        print(f"| {label} | {seconds:.2f} | {peak:.0f} |")
    per_event = rows[-1][1] / args.events
    per_root = per_event * HOURLY_EVENTS
    print(
        f"\nperiod roots at 100 fills/s, one an hour: {HOURLY_EVENTS:,} events a root, "
        f"{per_root:.2f} s of CPU a root = {per_root / 3600 * 100:.3f} % of one core"
    )


if __name__ == "__main__":
    main()
