"""The process pool of CPU-heavy jobs: their bodies never run on the event loop.

Processes are started with "spawn": a fork of a server with database, Redis and writer threads
could inherit a lock held by one of them. A spawned process imports the job's module afresh, so
the body must be a module-level function (jobs/declare.py, `cpu_heavy`). Processes start on the
first CPU job, not with the service.
"""

import asyncio
import contextlib
import functools
import multiprocessing
from collections.abc import Callable, Hashable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from papertrade.kit.fairgate import FairGate


class CpuPool:
    """A process pool that is started again when one of its processes died."""

    def __init__(self, processes: int):
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None
        self.gate = FairGate(processes)  # one process per user at a time, turns in fair order

    async def run_for(self, user: Hashable, function: Callable[..., Any], *args: Any) -> Any:
        """`function(*args)` in a process of the pool once `user` has a turn at one."""
        async with self.gate.turn(user):
            return await self.run(function, *args)

    async def run(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """`function(*args, **kwargs)` in a process of the pool."""
        pool = self._pool
        if pool is None:
            context = multiprocessing.get_context("spawn")
            pool = self._pool = ProcessPoolExecutor(self.processes, mp_context=context)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(pool, functools.partial(function, *args, **kwargs))
        except BrokenProcessPool:
            # A process died under a job (killed, out of memory): that job fails, and a pool
            # that stays broken would fail every later one.
            if self._pool is pool:
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
            raise

    async def close(self) -> None:
        """Stop the processes, after the jobs they are running (without blocking the loop)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            with contextlib.suppress(Exception):
                await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)
