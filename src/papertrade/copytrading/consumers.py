"""Copy trading's outbox consumer: the leaders' fills, mirrored into their followers'
portfolios (mirror.py). It places orders, so it needs the running process's venue."""

from collections.abc import Sequence

from papertrade.context import AppContext
from papertrade.copytrading.mirror import FILLED, mirror
from papertrade.orders.pricing import Venue
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork


def mirror_consumer(ctx: AppContext) -> Consumer:
    """The consumer, bound to `ctx` (its market attaches when the app starts)."""

    async def handle(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
        await mirror(uow, Venue.of(ctx), events)

    return Consumer("copy.mirror", handle, types=frozenset({FILLED}))
