"""Period roots of the attested track record, taken by the code the attestation job runs
(docs/attestation.md): `chain.attest` calls `chain/attest.py` `seal_finished_days` in one unit
of work, and so does this benchmark, on a SQLite database holding 1,000 portfolios.

1. chain upkeep: each event's canonical JSON (the standard library's; the outbox consumer gets
   the same bytes faster from orjson) and SHA-256, linked per portfolio and keyed by its UTC
   second, as the consumer writes it over the period (not in the order path); the rows are
   then written to SQLite (not timed as part of a root);
2. (a) one root over `--events` events (1,000,000) in one hour: `seal_finished_days` at the end
   of that hour, as the job calls it: its catch-up sweep over every portfolio (nothing is left to
   chain: the consumer did it), the period's hashes read in leaf order, the RFC 6962 tree, the
   signed PTA2 statement with a line per portfolio, its row and anchor row, and the commit.
   Target: under 10 s. Then one inclusion proof as the proof endpoint answers it (`views.proof`,
   which rebuilds the root's tree), and the job's catch-up sweep alone (`catch_up_all`: three
   statements per portfolio, whatever the events), the part of each root that does not grow
   with them;
3. (b) an hourly root at 100 fills/s: `--hourly-events` (360,000) more events in the next hour,
   then the job's next call, whose root chains to the first. Its CPU is the share of one core
   that hourly roots take at that rate.

Seconds are wall time; CPU seconds are the whole process's (every thread: SQLite runs in
aiosqlite's thread). The load average before the run is printed with the table: run it on a
quiet machine. Each root is checked against the one computed in memory. `--events N
--hourly-events M` for a smaller run.
"""

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import bindparam, insert, select, update

from papertrade import migrate
from papertrade.chain import views
from papertrade.chain.attest import seal_finished_days
from papertrade.chain.proofs import (
    GENESIS,
    canonical,
    event_hash,
    iso_ms,
    leaf_hash,
    merkle_root,
    second_key,
    statement_hash,
)
from papertrade.chain.service import catch_up_all
from papertrade.db import Database
from papertrade.models import Attestation, ChainEntry, ChainHead, Portfolio, User

PORTFOLIOS = 1000
HOUR_MS = 3_600_000
START_MS = 1_763_942_400_000  # 2025-11-24 00:00 UTC
CALENDARS = ["https://a.pool.opentimestamps.org"]  # an anchor row is written, nothing is sent
WRITE_BATCH = 50_000
T = TypeVar("T")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class Rows:
    """The table: (phase, seconds, CPU seconds, peak RSS in MB)."""

    rows: list[tuple[str, float, float, float]] = field(default_factory=list)

    def timed(self, label: str, work: Callable[[], T]) -> T:
        start, cpu = time.perf_counter(), time.process_time()
        result = work()
        self.add(label, time.perf_counter() - start, time.process_time() - cpu)
        return result

    async def timed_async(self, label: str, work: Callable[[], Awaitable[T]]) -> T:
        start, cpu = time.perf_counter(), time.process_time()
        result = await work()
        self.add(label, time.perf_counter() - start, time.process_time() - cpu)
        return result

    def add(self, label: str, seconds: float, cpu: float) -> None:
        self.rows.append((label, seconds, cpu, peak_mb()))


@dataclass
class Chains:
    """Each portfolio's chain as the outbox consumer keeps it: its head and its newest key."""

    seqs: list[int] = field(default_factory=lambda: [0] * PORTFOLIOS)
    heads: list[str] = field(default_factory=lambda: [GENESIS] * PORTFOLIOS)
    keys: list[str] = field(default_factory=lambda: [""] * PORTFOLIOS)
    fills: int = 0

    def period(self, count: int, start_ms: int) -> list[dict[str, Any]]:
        """`count` fills spread evenly over the hour from `start_ms` and over the portfolios,
        chained: the rows the consumer writes."""
        entries = []
        for i in range(count):
            p, ts = i % PORTFOLIOS, start_ms + i * HOUR_MS // count
            self.fills += 1
            self.seqs[p] += 1
            body = canonical(
                {
                    "portfolio_id": p + 1,
                    "ref": f"fill:{self.fills}",
                    "ts": iso_ms(ts),
                    "event_type": "fill",
                    "symbol": "BTCUSDT",
                    "side": "buy" if i % 2 else "sell",
                    "qty": "0.001",
                    "price": "50123.4",
                    "fee": "0.025062",
                    "realized_pnl": "0",
                    "seq": self.seqs[p],
                    "prev_hash": self.heads[p],
                }
            )
            self.heads[p] = event_hash(body)
            self.keys[p] = max(self.keys[p], second_key(ts))
            entries.append(
                {
                    "portfolio_id": p + 1,
                    "seq": self.seqs[p],
                    "day": self.keys[p],
                    "source": "fill",
                    "source_id": self.fills,
                    "ts": ts,
                    "body": body,
                    "hash": self.heads[p],
                }
            )
        return entries

    def head_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "pid": p + 1,
                "seq": self.seqs[p],
                "hash": self.heads[p],
                "period": self.keys[p],
            }
            for p in range(PORTFOLIOS)
        ]


def memory_root(entries: list[dict[str, Any]]) -> str:
    """The root as the statement defines it: leaves in (key, portfolio, seq) order."""
    ordered = sorted(entries, key=lambda e: (e["day"], e["portfolio_id"], e["seq"]))
    return merkle_root([leaf_hash(e["hash"]) for e in ordered]).hex()


async def seed(db: Database) -> None:
    """The portfolios (and their users) the job's catch-up sweep visits, and their heads."""
    async with db.engine.begin() as conn:
        await conn.execute(
            insert(User),
            [
                {"id": p, "email": f"bench{p}@example.com", "password_hash": "x"}
                for p in range(1, PORTFOLIOS + 1)
            ],
        )
        zero, balance = Decimal(0), Decimal(10_000)
        await conn.execute(
            insert(Portfolio),
            [
                {
                    "id": p,
                    "user_id": p,
                    "name": "bench",
                    "initial_balance": balance,
                    "balance": balance,
                    "maker_fee_rate": zero,
                    "taker_fee_rate": zero,
                }
                for p in range(1, PORTFOLIOS + 1)
            ],
        )
        await conn.execute(
            insert(ChainHead),
            [
                {"portfolio_id": p, "seq": 0, "hash": GENESIS, "period": ""}
                for p in range(1, PORTFOLIOS + 1)
            ],
        )


async def write(db: Database, chains: Chains, entries: list[dict[str, Any]]) -> None:
    """The consumer's rows and heads, written in bulk (outside the timed roots)."""
    async with db.engine.begin() as conn:
        for first in range(0, len(entries), WRITE_BATCH):
            await conn.execute(insert(ChainEntry), entries[first : first + WRITE_BATCH])
        await conn.execute(
            update(ChainHead)
            .where(ChainHead.portfolio_id == bindparam("pid"))
            .values(seq=bindparam("seq"), hash=bindparam("hash"), period=bindparam("period")),
            chains.head_rows(),
        )


async def sweep(db: Database) -> None:
    """The first step of seal_finished_days on its own: chain what the consumer left."""
    async with db.unit_of_work() as session:
        if await catch_up_all(session):
            raise SystemExit("the sweep found events to chain: the benchmark's heads are wrong")


async def take_root(db: Database, key: Ed25519PrivateKey, now: int) -> Attestation:
    """What the job does every period: one unit of work around seal_finished_days."""
    async with db.unit_of_work() as session:
        sealed = await seal_finished_days(session, key, CALENDARS, now, every_s=HOUR_MS // 1000)
    assert len(sealed) == 1, sealed
    async with db.reader() as session:
        row = await session.get(Attestation, sealed[0])
    assert row is not None
    return row


async def run(events: int, hourly: int, rows: Rows) -> list[str]:
    notes: list[str] = []
    key = Ed25519PrivateKey.generate()
    chains = Chains()
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite+aiosqlite:///{tmp}/bench.db")
        try:
            await migrate.upgrade(db.engine)
            await seed(db)

            entries = rows.timed(
                f"chain upkeep: canonical JSON + SHA-256 of {events:,} events",
                lambda: chains.period(events, START_MS),
            )
            expected = memory_root(entries)
            await write(db, chains, entries)
            entries.clear()
            first = await rows.timed_async(
                f"(a) root over {events:,} events in one period (seal_finished_days)",
                lambda: take_root(db, key, START_MS + HOUR_MS + 1000),
            )
            if (first.root, first.leaf_count) != (expected, events):
                raise SystemExit("(a): the job took another root than the events make")
            notes.append(f"(a) root {first.day}: {first.root[:16]}…, {first.leaf_count:,} leaves")

            async with db.reader() as session:
                entry = await session.scalar(
                    select(ChainEntry).where(
                        ChainEntry.portfolio_id == PORTFOLIOS // 3, ChainEntry.seq == 1
                    )
                )
                assert entry is not None
                await rows.timed_async(
                    "one inclusion proof (views.proof: rebuilds the root's tree)",
                    lambda: views.proof(session, entry, HOUR_MS // 1000, 1),
                )

            await rows.timed_async(
                f"the job's catch-up sweep alone, part of every root (catch_up_all over "
                f"{PORTFOLIOS:,} portfolios, nothing to chain)",
                lambda: sweep(db),
            )
            entries = chains.period(hourly, START_MS + HOUR_MS)
            expected = memory_root(entries)
            await write(db, chains, entries)
            entries.clear()
            second = await rows.timed_async(
                f"(b) hourly root at 100 fills/s: {hourly:,} events (seal_finished_days)",
                lambda: take_root(db, key, START_MS + 2 * HOUR_MS + 1000),
            )
            if (second.root, second.leaf_count) != (expected, hourly):
                raise SystemExit("(b): the job took another root than the events make")
            prev = statement_hash((first.statement or "").encode())
            if f"\nprev {prev}\n" not in (second.statement or ""):
                raise SystemExit("(b): the root does not chain to (a)")
            notes.append(f"(b) root {second.day}: {second.root[:16]}…, chained to (a)")
        finally:
            await db.dispose()
    return notes


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=1_000_000, help="events in root (a)")
    parser.add_argument(
        "--hourly-events", type=int, default=100 * 3600, help="events in root (b): 100 fills/s"
    )
    args = parser.parse_args()
    before = load()
    rows = Rows()
    notes = asyncio.run(run(args.events, args.hourly_events, rows))
    print(f"{PORTFOLIOS:,} portfolios, SQLite; load average before the run: {before}\n")
    print("| phase | seconds | CPU seconds | peak RSS, MB |")
    print("|---|---:|---:|---:|")
    for label, seconds, cpu, peak in rows.rows:
        print(f"| {label} | {seconds:.2f} | {cpu:.2f} | {peak:.0f} |")
    hourly_cpu = rows.rows[-1][2]
    share = hourly_cpu / 3600 * 100
    print(
        f"| (b) as a share of one core, one root an hour | | {share:.3f} % | |\n"
        f"\nload average after: {load()}"
    )
    root_a = rows.rows[1][1]
    verdict = "met" if root_a < 10 else "NOT met"
    print(f"(a) target under 10 s for {args.events:,} events: {verdict} ({root_a:.2f} s)")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main()
