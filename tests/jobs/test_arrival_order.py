"""A key's waiting items are processed in arrival order before the job's own (kit/turns.py), the
shared step of the inbound sources' and the Telegram chats' jobs: one item that fails is left to
its own job's retries, and never holds back the items that came after it."""

import logging

import pytest

from papertrade.kit.turns import in_arrival_order


class Items:
    def __init__(self, failing: set[int]) -> None:
        self.failing = failing
        self.done: list[int] = []

    async def process(self, item: int) -> str:
        if item in self.failing:
            raise RuntimeError(f"item {item} is broken")
        self.done.append(item)
        return f"processed {item}"


async def test_earlier_items_go_first_and_a_broken_one_is_passed_over(
    caplog: pytest.LogCaptureFixture,
) -> None:
    items = Items(failing={2})
    with caplog.at_level(logging.WARNING, logger="papertrade.turns"):
        outcome = await in_arrival_order(items.process, [1, 2, 3], 4, "signal")
    assert outcome == "processed 4"
    assert items.done == [1, 3, 4]
    assert "signal 2 failed before 4" in caplog.text
    assert "item 2 is broken" in caplog.text  # with its traceback, to find the cause


async def test_the_jobs_own_failure_reaches_the_job_to_be_retried() -> None:
    items = Items(failing={4})
    with pytest.raises(RuntimeError, match="item 4 is broken"):
        await in_arrival_order(items.process, [1, 2], 4, "signal")
    assert items.done == [1, 2]
