"""What a running job is handed: its identity, the process's resources and a progress reporter."""

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from papertrade.context import AppContext
from papertrade.jobs.cpu import CpuPool

ProgressWriter = Callable[[str, float, str], Awaitable[None]]


@dataclass(frozen=True)
class JobRun:
    """One run of a job (the first argument of every queued and scheduled job's body)."""

    id: str
    name: str
    attempt: int  # 1 for the first run, 2 for the first retry, …
    ctx: AppContext
    _write_progress: ProgressWriter = field(repr=False)
    _cpu: CpuPool | None = field(default=None, repr=False)
    _sandbox: CpuPool | None = field(default=None, repr=False)

    async def progress(self, done: float, text: str = "") -> None:
        """Record how far the job got (0 to 1) and a short note, for whoever watches the jobs
        table. Call it outside a database transaction of the job: it writes a row of its own."""
        await self._write_progress(self.id, done, text)

    async def compute(self, function: Callable[..., Any], *args: Any) -> Any:
        """`function(*args)` in the process pool (a module-level function of picklable
        arguments): how an async job hands its CPU-heavy part off the event loop."""
        if self._cpu is None:  # a run made outside the job engine (a test of the body)
            return await asyncio.to_thread(functools.partial(function, *args))
        return await self._cpu.run(function, *args)

    async def compute_for(
        self, user: int, function: Callable[..., Any], *args: Any, sandboxed: bool = False
    ) -> Any:
        """compute() on behalf of `user`, who gets one process at a time and a fair turn
        (kit/fairgate.py); `sandboxed` work (a Python strategy, whose process may take its whole
        time limit) has a pool of its own, so it never holds the others' work."""
        pool = self._sandbox if sandboxed else self._cpu
        if pool is None:  # a run made outside the job engine (a test of the body)
            return await asyncio.to_thread(functools.partial(function, *args))
        return await pool.run_for(user, function, *args)
