"""The fair gate in front of the backtest pools (kit/fairgate.py), by the order turns are given:
one user's long queue never stands between another user and a slot. Driven by events, not by
time, so what it shows does not depend on the machine's speed (tests/strategies/test_fair_use.py
shows the same through the app)."""

import asyncio

from papertrade.kit.fairgate import FairGate


class Runs:
    """Work items that take a turn at the gate and hold it until the test lets them finish."""

    def __init__(self, gate: FairGate) -> None:
        self.gate = gate
        self.started: list[str] = []
        self._finish: dict[str, asyncio.Event] = {}
        self.tasks: list[asyncio.Task[None]] = []

    def queue(self, user: str, name: str) -> None:
        self._finish[name] = asyncio.Event()
        self.tasks.append(asyncio.create_task(self._run(user, name)))

    async def _run(self, user: str, name: str) -> None:
        async with self.gate.turn(user):
            self.started.append(name)
            await self._finish[name].wait()

    async def finish(self, name: str) -> None:
        self._finish[name].set()
        for _ in range(5):  # the run's exit, the gate's hand-out, the next run's start
            await asyncio.sleep(0)

    async def settle(self) -> None:
        for _ in range(5):
            await asyncio.sleep(0)


async def test_with_two_slots_another_user_starts_at_once_beside_a_long_queue() -> None:
    runs = Runs(FairGate(2))
    for i in range(8):
        runs.queue("hog", f"hog{i}")
    await runs.settle()
    assert runs.started == ["hog0"]  # one slot a user: the hog's queue waits for its own
    runs.queue("other", "other0")
    await runs.settle()
    assert runs.started == ["hog0", "other0"]  # the free slot, at once, whatever is queued
    for name in ("hog0", "other0"):
        await runs.finish(name)
    for i in range(1, 8):
        await runs.finish(f"hog{i}")
    await asyncio.gather(*runs.tasks)
    assert runs.started == ["hog0", "other0"] + [f"hog{i}" for i in range(1, 8)]


async def test_with_one_slot_another_user_waits_for_one_run_not_for_the_queue() -> None:
    runs = Runs(FairGate(1))
    for i in range(6):
        runs.queue("hog", f"hog{i}")
    await runs.settle()
    runs.queue("other", "other0")
    runs.queue("third", "third0")
    await runs.settle()
    await runs.finish("hog0")
    assert runs.started == ["hog0", "other0"]  # the next turn is the newcomer's, not hog1's
    await runs.finish("other0")
    assert runs.started[-1] == "third0"
    await runs.finish("third0")
    assert runs.started[-1] == "hog1"  # then the hog again
    for i in range(1, 6):
        await runs.finish(f"hog{i}")
    await asyncio.gather(*runs.tasks)
    assert runs.started == ["hog0", "other0", "third0"] + [f"hog{i}" for i in range(1, 6)]


async def test_a_cancelled_wait_gives_its_turn_to_the_next() -> None:
    runs = Runs(FairGate(1))
    runs.queue("a", "a0")
    runs.queue("b", "b0")
    runs.queue("c", "c0")
    await runs.settle()
    runs.tasks[1].cancel()  # b gave up waiting (its backtest was deleted)
    await runs.settle()
    await runs.finish("a0")
    assert runs.started == ["a0", "c0"]
    await runs.finish("c0")
    await asyncio.gather(runs.tasks[0], runs.tasks[2])
    assert runs.gate.busy == 0
