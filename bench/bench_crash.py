"""Crash test summary: kill -9 the service repeatedly under load (issue 7.8).

Usage:
  python bench/bench_crash.py [kills] [seconds between kills]               embedded SQLite mode
  python bench/bench_crash.py --scaleout [kills] [seconds between kills]    engine leader killed
  python bench/bench_crash.py --outbox [kills] [seconds between kills]      outbox delivery

The scale-out mode runs two `papertrade serve` processes on a fresh PostgreSQL database (created
on the server of PAPERTRADE_TEST_POSTGRES_URL, default postgresql+asyncpg://postgres@127.0.0.1:5432/
test, and dropped afterwards) and Redis (PAPERTRADE_TEST_REDIS_URL, default
redis://127.0.0.1:6379/12), and kills whichever holds the engine leadership.
"""

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.liveserver import free_port
from tests.reliability.crashkit import CrashReport, run
from tests.reliability.failover import FailoverReport, fresh_database, run_failover
from tests.reliability.outbox_crash import run_outbox

PG_DEFAULT = "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
REDIS_DEFAULT = "redis://127.0.0.1:6379/12"
COLUMNS = (
    "| kills survived | orders acknowledged | orders lost | duplicate fills | overfilled | "
    "resting lost | ledger ≠ balance | position ≠ fills |"
)


def _row(report: CrashReport) -> str:
    return (
        f"| {report.kills} | {report.acknowledged} | {len(report.lost)} | "
        f"{len(report.duplicate_fills)} | {len(report.overfilled)} | {len(report.resting_lost)} | "
        f"{len(report.ledger_mismatches)} | {len(report.position_mismatches)} |"
    )


async def embedded(kills: int, between: float) -> None:
    with tempfile.TemporaryDirectory() as var:
        report = await run(Path(var), free_port(), kills=kills, seconds_between=between)
    print(
        f"SQLite embedded mode, 4 load clients (market, limit, cancel), kill -9 every {between} s\n"
    )
    print(COLUMNS)
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(_row(report))


async def scaleout(kills: int, between: float) -> None:
    base = os.environ.get("PAPERTRADE_TEST_POSTGRES_URL", PG_DEFAULT)
    redis_url = os.environ.get("PAPERTRADE_TEST_REDIS_URL", REDIS_DEFAULT)
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as var:
        async with fresh_database(base, f"papertrade_crash_{os.getpid()}") as url:
            report: FailoverReport = await run_failover(
                Path(var), url, redis_url, kills=kills, seconds_between=between
            )
    took = time.monotonic() - started
    print(
        "Scale-out mode: 2 `papertrade serve` processes on PostgreSQL + Redis, 4 load clients "
        f"(market, limit, cancel; /v1 and /fapi) on both, the engine leader killed with -9 "
        f"every {between} s and restarted as the standby; {took:.0f} s in all\n"
    )
    print(COLUMNS + " crossed, unfilled | takeover median / max | longest price gap |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    takeover = report.takeover_s or [0.0]
    print(
        _row(report)
        + f" {len(report.crossed_unfilled)} of {report.crossed_checked} |"
        + f" {statistics.median(takeover):.2f} s / {max(takeover):.2f} s |"
        + f" {report.longest_price_gap_ms / 1000:.1f} s |"
    )
    print(
        f"\n{report.fapi_orders} of the acknowledged orders came through /fapi; "
        f"{report.maker_fills} resting orders were filled by the engine leaders."
    )


async def outbox(kills: int, between: float) -> None:
    with tempfile.TemporaryDirectory() as var:
        report = await run_outbox(Path(var), free_port(), kills=kills, seconds_between=between)
    print(
        "SQLite embedded mode, 4 load clients, one outbox consumer taking 0.1 s per batch (its "
        f"effect: a row per event, in the unit of work that moves its cursor), kill -9 every "
        f"{between} s\n"
    )
    print(
        "| kills survived | events written | kills with events committed, undelivered "
        "(events) | lost | handled twice | orders without their event |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    waiting = [n for n in report.pending_at_kills if n]
    print(
        f"| {report.kills} | {report.events} | {len(waiting)} ({sum(waiting)}) | "
        f"{len(report.undelivered)} | {len(report.duplicated)} | "
        f"{len(report.orders_without_event)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--scaleout", action="store_true", help="kill the scale-out engine leader")
    mode.add_argument("--outbox", action="store_true", help="kill between commit and delivery")
    parser.add_argument("kills", nargs="?", type=int, default=20)
    parser.add_argument("between", nargs="?", type=float, default=1.5, help="seconds between")
    args = parser.parse_args()
    run_mode = scaleout if args.scaleout else outbox if args.outbox else embedded
    asyncio.run(run_mode(args.kills, args.between))


if __name__ == "__main__":
    main()
