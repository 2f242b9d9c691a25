"""Helpers for long-running asyncio tasks."""

import asyncio


def cancel_requested() -> bool:
    """This task was asked to stop. redis-py may turn the CancelledError into an error of its
    own, which a retry loop would otherwise catch and retry forever, hanging the shutdown."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
