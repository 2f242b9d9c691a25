"""Helpers for long-running asyncio tasks."""

import asyncio
import logging
from typing import Any

log = logging.getLogger("papertrade.tasks")


def cancel_requested() -> bool:
    """This task was asked to stop. redis-py may turn the CancelledError into an error of its
    own, which a retry loop would otherwise catch and retry forever, hanging the shutdown."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def stop_within(task: asyncio.Task[None], seconds: float, grace_s: float = 2.0) -> bool:
    """Wait up to `seconds` for `task` to end, then cancel it and wait `grace_s` more. True when
    it ended. A task that still does not end is left behind rather than awaited: a library
    finishing a read in a shielded block on a server that never answers (taskiq's receiver on
    a frozen Redis) would otherwise hold the process's stop forever, as `asyncio.wait_for`
    does, which waits for the cancelled task however long it takes."""
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=grace_s)
    if done and not task.cancelled():
        task.exception()  # retrieved: a task that failed while stopping is not logged twice
    return bool(done)


async def cancel_and_wait(*tasks: "asyncio.Task[Any] | None") -> None:
    """Cancel `tasks` (None is skipped) and wait until each has ended.

    The caller's own cancellation still goes through: `suppress(CancelledError)` around the wait
    would also swallow a cancellation of the caller, which would then go on as if never asked
    to stop. A task that had already failed is logged, not raised, so stopping goes on with the
    rest."""
    stopping = [task for task in tasks if task is not None]
    caller = asyncio.current_task()
    # Cancellations the caller had before (a cleanup after its own cancellation) are not new.
    before = caller.cancelling() if caller is not None else 0
    for task in stopping:
        task.cancel()
    for task in stopping:
        try:
            await task
        except asyncio.CancelledError:
            if caller is not None and caller.cancelling() > before:
                raise
        except Exception:
            log.exception("%s had failed before it was stopped", task.get_name())
