"""Crash test summary: kill -9 the embedded service repeatedly under load (issue 7.8).

Usage: python bench/bench_crash.py [kills] [seconds between kills]
"""

import asyncio
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.liveserver import free_port
from tests.reliability.crashkit import run


async def main(kills: int, between: float) -> None:
    with tempfile.TemporaryDirectory() as var:
        report = await run(Path(var), free_port(), kills=kills, seconds_between=between)
    print(
        f"SQLite embedded mode, 4 load clients (market, limit, cancel), kill -9 every {between} s\n"
    )
    print(
        "| kills survived | orders acknowledged | orders lost | duplicate fills | overfilled | "
        "resting lost | ledger ≠ balance |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {report.kills} | {report.acknowledged} | {len(report.lost)} | "
        f"{len(report.duplicate_fills)} | {len(report.overfilled)} | {len(report.resting_lost)} | "
        f"{len(report.ledger_mismatches)} |"
    )


if __name__ == "__main__":
    kills = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    between = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
    asyncio.run(main(kills, between))
