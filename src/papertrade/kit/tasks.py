"""Helpers for long-running asyncio tasks."""

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from redis.asyncio.client import PubSub

log = logging.getLogger("papertrade.tasks")


def cancel_requested() -> bool:
    """This task was asked to stop. redis-py may turn the CancelledError into an error of its
    own, which a retry loop would otherwise catch and retry forever, hanging the shutdown."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def wait_up_to(event: asyncio.Event, seconds: float) -> bool:
    """Until `event` is set (True) or `seconds` have passed, for a loop that runs until cancelled. A
    cancellation that the loop's own work lost (a library that ends its call normally when
    cancelled: the task still shows the request, as `cancelling()`) is raised here, so the stop
    waiting for the loop ends (seen under load: a cancelled mail sender went on polling for 480
    s, and the test's app never stopped)."""
    if cancel_requested():
        raise asyncio.CancelledError
    woken = False
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            woken = await event.wait()
    if cancel_requested():
        raise asyncio.CancelledError
    return woken


async def next_message(pubsub: "PubSub", wait_s: float) -> dict[str, Any] | None:
    """The next published message (None after `wait_s` seconds without one), for a task that
    listens until it is cancelled. A cancellation that lands while redis-py reads can come back
    from it as a plain return without a message; the listening loop would then go on, and the
    stop that waits for it would never end (seen under load: a test's app that never stopped
    kept running into the next tests). The pending cancellation is raised here instead."""
    message: dict[str, Any] | None = await pubsub.get_message(
        ignore_subscribe_messages=True, timeout=wait_s
    )
    if cancel_requested():
        raise asyncio.CancelledError
    return message


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


async def cancel_redis_listeners(*tasks: "asyncio.Task[Any] | None", grace_s: float = 5.0) -> None:
    """Cancel tasks that read from Redis and wait up to `grace_s` for them; one still running
    then is logged and left behind, so that the stop around it ends. redis-py has been seen to
    hold a cancelled read (a stop that never ended, with a Redis outage in the test before);
    closing the task's connection afterwards, as its owner does, ends it."""
    stopping = [task for task in tasks if task is not None]
    for task in stopping:
        task.cancel()
    if not stopping:
        return
    done, pending = await asyncio.wait(stopping, timeout=grace_s)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            log.error("%s had failed before it was stopped", task.get_name())
    for task in pending:
        log.error("%s did not stop within %.0f s of its cancellation", task.get_name(), grace_s)


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
