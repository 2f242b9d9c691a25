"""Group commit for orders: what /v1 and /fapi call to place one.

Requests queue their commands; one task places everything queued so far in a single unit of work,
commits once, and only then answers each request. While a group commits, the next one gathers,
so under load a group holds tens of orders and the per-commit cost (the write lock, the round
trips, the fsync) is shared by all of them. An order is acknowledged only after its group has
committed: a crash loses nothing that a client saw accepted.

An order refused by a trading rule is refused alone (place() checks everything before it changes
anything). If the group's commit itself fails, each of its orders is retried in its own unit of
work, so one bad order cannot take its neighbours down with it.
"""

import asyncio
import logging
from dataclasses import dataclass

from starlette.requests import HTTPConnection

from papertrade.auth.principal import Principal
from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.faults.outage import as_unavailable
from papertrade.orders import service
from papertrade.orders.commands import PlaceOrder
from papertrade.orders.pricing import Venue
from papertrade.orders.record import OrderRecord
from papertrade.trading.errors import TradingRuleError

log = logging.getLogger("papertrade.orders.writer")
MAX_GROUP = 256  # bounds one unit of work's time holding the write lock

Outcome = OrderRecord | PapertradeError | TradingRuleError


@dataclass(slots=True)
class _Request:
    principal: Principal
    command: PlaceOrder
    answer: "asyncio.Future[OrderRecord]"

    def resolve(self, outcome: Outcome) -> None:
        if self.answer.done():  # the caller went away; the order stands all the same
            return
        if isinstance(outcome, OrderRecord):
            self.answer.set_result(outcome)
        else:
            self.answer.set_exception(outcome)

    def fail(self, exc: BaseException) -> None:
        if not self.answer.done():
            self.answer.set_exception(exc)


def writer_of(conn: HTTPConnection) -> "OrderWriter":
    """The running app's order writer."""
    writer: OrderWriter = conn.app.state.orders
    return writer


async def order_writer(conn: HTTPConnection) -> "OrderWriter":
    """writer_of as a FastAPI dependency: async, so it runs on the loop and not in a thread."""
    return writer_of(conn)


class OrderWriter:
    """One per process; its task starts with the first order."""

    def __init__(self, ctx: AppContext):
        self._ctx = ctx
        self._queue: list[_Request] = []
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._closing = False

    async def place(self, principal: Principal, command: PlaceOrder) -> OrderRecord:
        """Place an order; returns once it is committed (filled, resting or expired)."""
        answer: asyncio.Future[OrderRecord] = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(principal, command, answer))
        self._wake.set()
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="order-writer")
        return await answer

    async def close(self) -> None:
        """Finish the orders already queued, then stop."""
        task = self._task
        if task is None:
            return
        self._closing = True
        self._wake.set()
        await task

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                group, self._queue = self._queue[:MAX_GROUP], self._queue[MAX_GROUP:]
                await self._commit(group)
            if self._closing:  # an order arriving later starts a new task (place() above)
                return

    async def _commit(self, group: list[_Request]) -> None:
        try:
            outcomes = await self._place_all(group)
        except asyncio.CancelledError:
            for request in group:
                request.fail(RuntimeError("the service is shutting down"))
            raise
        except Exception as exc:
            unavailable = as_unavailable(exc)
            if unavailable is not None:
                # The database failed, not an order: placing each alone would fail the same
                # way, or (after a commit of unknown outcome) place the group twice.
                self._ctx.db.outages.failed(exc)
                for request in group:
                    request.fail(unavailable)
                return
            if len(group) == 1:
                log.exception("order placement failed")
                group[0].fail(exc)
                return
            log.warning("a group of %d orders failed to commit; placing each alone", len(group))
            for request in group:
                await self._commit([request])
            return
        for request, outcome in zip(group, outcomes, strict=True):
            request.resolve(outcome)

    async def _place_all(self, group: list[_Request]) -> list[Outcome]:
        venue = Venue.of(self._ctx)
        requests = [(r.principal, r.command) for r in group]
        # place_all keeps the loaded portfolios current (orders/workset.py), so they may be
        # remembered for the next group.
        return await self._ctx.run_unit(
            lambda uow: service.place_all(uow, venue, requests), remember=True
        )
