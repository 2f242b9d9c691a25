"""Turns at a few slots, shared fairly between users.

A user holds at most `per_user` slots at once; when a slot frees, the next turn goes to the user
who has waited longest for their first turn, and a user whose run just ended waits behind the
others (round robin), so one user's queue of slow work never stands between another user and a
free slot for longer than the run in progress. Futures are made on the running loop at each
wait, so one gate serves whichever loop asks (a process runs one).
"""

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Hashable


class FairGate:
    def __init__(self, slots: int, per_user: int = 1):
        self.slots = max(1, slots)
        self.per_user = max(1, min(per_user, self.slots))
        self._running: dict[Hashable, int] = {}
        self._waiting: OrderedDict[Hashable, deque[asyncio.Future[None]]] = OrderedDict()

    @property
    def busy(self) -> int:
        return sum(self._running.values())

    @contextlib.asynccontextmanager
    async def turn(self, user: Hashable) -> AsyncIterator[None]:
        if not self._may_start(user):
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._waiting.setdefault(user, deque()).append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter.done() and not waiter.cancelled():
                    self._release(user)  # it was handed a slot as it was cancelled
                else:
                    self._forget(user, waiter)
                raise
        else:
            self._running[user] = self._running.get(user, 0) + 1
        try:
            yield
        finally:
            self._release(user)

    def _may_start(self, user: Hashable) -> bool:
        return (
            not self._waiting.get(user)
            and self.busy < self.slots
            and self._running.get(user, 0) < self.per_user
        )

    def _release(self, user: Hashable) -> None:
        left = self._running.get(user, 0) - 1
        if left > 0:
            self._running[user] = left
        else:
            self._running.pop(user, None)
        if user in self._waiting:
            self._waiting.move_to_end(user)  # just had a turn: the others go first
        self._hand_out()

    def _hand_out(self) -> None:
        for user in list(self._waiting):
            if self.busy >= self.slots:
                return
            queue = self._waiting[user]
            while queue and queue[0].done():
                queue.popleft()  # cancelled meanwhile
            if queue and self._running.get(user, 0) < self.per_user:
                self._running[user] = self._running.get(user, 0) + 1
                queue.popleft().set_result(None)
                self._waiting.move_to_end(user)  # the others go first next time
            if not queue:
                del self._waiting[user]

    def _forget(self, user: Hashable, waiter: asyncio.Future[None]) -> None:
        queue = self._waiting.get(user)
        if queue is not None:
            with contextlib.suppress(ValueError):
                queue.remove(waiter)
            if not queue:
                del self._waiting[user]
        self._hand_out()
