"""A loop that runs until cancelled stops when cancelled, even when its own work lost the
cancellation (a library that ends its call normally when cancelled: seen under load, a mail
sender polled on, cancelled, for 480 s, and the app around it never stopped)."""

import asyncio
import contextlib

from papertrade.kit.tasks import wait_up_to


async def _work_that_loses_a_cancel() -> None:
    # What the library did: it ends normally, and the task still shows the request (cancelling())
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(0.05)


async def test_a_polling_loop_stops_even_when_its_work_lost_the_cancel() -> None:
    wake = asyncio.Event()
    way_out = asyncio.Event()  # the test's own, should the cancellation stay lost

    async def poll() -> None:
        while not way_out.is_set():
            await _work_that_loses_a_cancel()
            await wait_up_to(wake, 0.01)

    task = asyncio.create_task(poll())
    await asyncio.sleep(0.1)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=5)
    way_out.set()
    await asyncio.wait({task}, timeout=5)
    assert done == {task} and task.cancelled()


async def test_it_says_whether_the_event_woke_it() -> None:
    wake = asyncio.Event()
    assert await wait_up_to(wake, 0.01) is False
    wake.set()
    assert await wait_up_to(wake, 5) is True
