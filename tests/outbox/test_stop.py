"""The outbox's delivery stops when asked, even when a commit wakes it at the same moment.

Python 3.11's `asyncio.wait_for` returns the awaited result instead of raising when a
cancellation arrives together with that result; the delivery loop then went on forever and the
process's stop, which waits for it, hung (a CI run: a test's teardown stuck for 480 s)."""

import asyncio

from papertrade.config import Settings
from tests.conftest import running_app


async def test_delivery_stops_when_a_commit_wakes_it_as_it_is_stopped(
    isolated_settings: Settings,
) -> None:
    async with running_app(isolated_settings) as app:
        dispatcher, written = app.state.outbox, app.state.ctx.outbox_written
        for _ in range(5):
            await asyncio.sleep(0.3)  # idle: waiting for the next commit or poll
            written.set()  # a commit elsewhere, in the same turn as the stop
            stopping = asyncio.create_task(dispatcher.follow())
            done, _ = await asyncio.wait({stopping}, timeout=20)
            assert done, "the outbox's delivery did not stop: the process's stop would hang"
            await dispatcher.lead()
