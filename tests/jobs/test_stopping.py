"""Stopping a process is not held forever by a task that will not end (a CI hang: taskiq's
receiver, cancelled on a frozen Redis, kept waiting in a shielded cleanup, and the process's
stop waited for it through `asyncio.wait_for`), and stopping a background loop neither swallows
the stopper's own cancellation nor gives up on the other loops (kit.tasks.cancel_and_wait)."""

import asyncio
import logging

import pytest

from papertrade.kit.tasks import cancel_and_wait, stop_within


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


async def _loop_with_a_slow_cleanup(cleaning: asyncio.Event, release: asyncio.Event) -> None:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        cleaning.set()
        await release.wait()  # e.g. closing a connection
        raise


async def test_a_stopper_cancelled_while_it_waits_for_a_loop_is_cancelled() -> None:
    cleaning, release = asyncio.Event(), asyncio.Event()
    loop = asyncio.create_task(_loop_with_a_slow_cleanup(cleaning, release))
    went_on = False

    async def stop_then_go_on() -> None:
        nonlocal went_on
        await cancel_and_wait(loop)
        went_on = True  # what a stopper does next (its own shutdown steps)

    await asyncio.sleep(0)
    stopper = asyncio.create_task(stop_then_go_on())
    await cleaning.wait()
    stopper.cancel()  # the process is told to stop harder while the loop cleans up
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await stopper
    assert stopper.cancelled() and not went_on and loop.cancelled()


async def test_a_cleanup_after_its_own_cancellation_still_stops_every_loop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def failing() -> None:
        raise RuntimeError("the feed broke")

    first = asyncio.create_task(asyncio.sleep(3600), name="first")
    broken = asyncio.create_task(failing(), name="broken")
    last = asyncio.create_task(asyncio.sleep(3600), name="last")
    cleaned = False

    async def service() -> None:
        nonlocal cleaned
        try:
            await asyncio.Event().wait()
        finally:  # cancelled once already: the loops' own cancellations are not news to it
            await cancel_and_wait(first, None, broken, last)
            cleaned = True

    running = asyncio.create_task(service())
    await asyncio.sleep(0.01)
    running.cancel()
    with (
        caplog.at_level(logging.ERROR, logger="papertrade.tasks"),
        pytest.raises(asyncio.CancelledError),
    ):
        await running
    assert cleaned and first.cancelled() and last.cancelled()
    assert "broken had failed before it was stopped" in caplog.text
