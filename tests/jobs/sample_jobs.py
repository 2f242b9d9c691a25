"""Jobs that exist only for the tests: one that waits half way, one that always fails, CPU work."""

import asyncio
import os
import time
from pathlib import Path

from papertrade.jobs.declare import cpu_heavy, queued
from papertrade.jobs.run import JobRun

GATES: dict[str, asyncio.Event] = {}
RUNS: list[str] = []  # ids of the runs of COUNTED, in every app of this test process


def gate(key: str) -> asyncio.Event:
    return GATES.setdefault(key, asyncio.Event())


async def halfway(run: JobRun, gate_key: str) -> dict[str, int]:
    """Reports half way, then waits until the test opens its gate."""
    await run.progress(0.5, "half way")
    await gate(gate_key).wait()
    return {"attempt": run.attempt}


async def always_fails(run: JobRun, reason: str) -> None:
    raise RuntimeError(f"{reason} (attempt {run.attempt})")


async def counted(run: JobRun, n: int) -> int:
    RUNS.append(run.id)
    return n


def spin_until(path: str) -> int:
    """CPU work: spin until `path` exists (at most a minute); returns this process's id."""
    deadline = time.monotonic() + 60
    spins = 0
    while not Path(path).exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} never appeared")
        for i in range(10_000):
            spins += i % 7
    return os.getpid()


HALFWAY = queued("test.halfway", halfway)
ALWAYS_FAILS = queued("test.always_fails", always_fails, attempts=3, retry_delay_s=1)
COUNTED = queued("test.counted", counted)
SPIN_UNTIL = cpu_heavy("test.spin_until", spin_until)
ALL = (HALFWAY, ALWAYS_FAILS, COUNTED, SPIN_UNTIL)
