"""Stopping a process is not held forever by a task that will not end (a CI hang: taskiq's
receiver, cancelled on a frozen Redis, kept waiting in a shielded cleanup, and the process's
stop waited for it through `asyncio.wait_for`)."""

import asyncio

from papertrade.kit.tasks import stop_within


async def test_a_task_stuck_in_its_cleanup_is_left_behind_not_awaited() -> None:
    release = asyncio.Event()
    cleaning = asyncio.Event()

    async def stubborn() -> None:
        try:
            await asyncio.Event().wait()  # a read that never returns
        except asyncio.CancelledError:
            cleaning.set()
            await release.wait()  # its cleanup waits on the same silent server

    task = asyncio.create_task(stubborn())
    await asyncio.sleep(0)
    stopped = await asyncio.wait_for(stop_within(task, 0.05, grace_s=0.05), timeout=30)
    assert stopped is False and cleaning.is_set() and not task.done()
    release.set()  # the server answers after all: the task ends on its own
    await task


async def test_a_task_that_ends_in_time_is_stopped_and_its_error_retrieved() -> None:
    async def quick() -> None:
        await asyncio.sleep(0.01)
        raise RuntimeError("failed while stopping")

    task = asyncio.create_task(quick())
    assert await stop_within(task, 5) is True
    assert isinstance(task.exception(), RuntimeError)

    sleeper = asyncio.create_task(asyncio.sleep(3600))
    assert await stop_within(sleeper, 0) is True and sleeper.cancelled()  # cancelled, ended
