"""The durable outbox: events are written with the change that caused them and every consumer
handles each one once, in order, whatever fails in between."""

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from fastapi import FastAPI
from sqlalchemy import func, select, text

from papertrade.config import Settings
from papertrade.models import OutboxCursor, OutboxEvent
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork
from tests.conftest import User, running_app, sign_up
from tests.trading_api.helpers import limit, market, set_price

EFFECTS = "CREATE TABLE consumer_effects (consumer VARCHAR(20), event_id BIGINT, type VARCHAR(60))"
INSERT = text("INSERT INTO consumer_effects VALUES (:consumer, :event_id, :type)")


def recorder(name: str, *, failures: int = 0, from_start: bool = False) -> Consumer:
    """A consumer whose effect is a row per event; its first `failures` batches raise."""
    left = [failures]

    async def handle(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
        await uow.session.execute(
            INSERT, [{"consumer": name, "event_id": e.id, "type": e.type} for e in events]
        )
        if left[0] > 0:  # after the effect: the rollback must take it back
            left[0] -= 1
            raise RuntimeError("the consumer's downstream is down")

    return Consumer(name, handle, from_start=from_start)


@asynccontextmanager
async def served(settings: Settings, *consumers: Consumer) -> AsyncIterator[FastAPI]:
    async with running_app(settings, consumers=consumers) as app:
        yield app


async def _effects_table(app: FastAPI) -> None:
    async with app.state.ctx.db.engine.begin() as conn:
        await conn.execute(text(EFFECTS))


async def _outbox(app: FastAPI) -> list[tuple[int, str, int | None]]:
    async with app.state.ctx.db.reader() as session:
        rows = await session.execute(
            select(OutboxEvent.id, OutboxEvent.type, OutboxEvent.portfolio_id).order_by(
                OutboxEvent.id
            )
        )
        return [(row[0], row[1], row[2]) for row in rows]


async def _effects(app: FastAPI, consumer: str) -> list[int]:
    async with app.state.ctx.db.reader() as session:
        rows = await session.scalars(
            text("SELECT event_id FROM consumer_effects WHERE consumer = :c ORDER BY event_id"),
            {"c": consumer},
        )
        return list(rows)


async def _caught_up(app: FastAPI, consumer: str, within: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        async with app.state.ctx.db.reader() as session:
            last = await session.scalar(select(func.max(OutboxEvent.id))) or 0
            cursor = await session.get(OutboxCursor, consumer)
        if cursor is not None and cursor.last_id >= last:
            return
        assert asyncio.get_running_loop().time() < deadline, f"{consumer} did not catch up"
        await asyncio.sleep(0.05)


async def _trade(user: User, app: FastAPI) -> int:
    """A market fill, a resting limit and its cancel; returns the portfolio."""
    await set_price(app, "BTCUSDT", "50000")
    pid: int = (await user.portfolio())["id"]
    await market(user, pid, "BTCUSDT", "buy", "0.002")
    resting = await limit(user, pid, "buy", "0.003", "40000")
    assert (await user.delete(f"/v1/order/{resting['id']}")).status_code == 200
    return pid


async def test_an_order_writes_its_events_in_its_own_transaction(
    isolated_settings: Settings,
) -> None:
    async with served(isolated_settings) as app:
        user = await sign_up(app)
        pid = await _trade(user, app)
        mine = [(kind, portfolio) for _, kind, portfolio in await _outbox(app)]
        # A market order's fill says it was accepted; a resting order is announced when it rests.
        assert mine == [("order.filled", pid), ("order.new", pid), ("order.canceled", pid)]
        before = await _outbox(app)
        refused = await user.post(
            "/v1/order",
            json={"portfolio_id": pid, "symbol": "BTCUSDT", "side": "buy", "type": "market",
                  "quantity": "50"},
        )  # fmt: skip
        assert refused.json()["error"] == "insufficient_margin"
        assert await _outbox(app) == before  # a refused order leaves no event behind


async def test_every_consumer_handles_each_event_once_in_order(
    isolated_settings: Settings,
) -> None:
    # From the start: a new consumer otherwise starts at the events committed after its first
    # round, and under load the first trade can commit before that round (a loaded run's flake).
    steady, flaky = (
        recorder("steady", from_start=True),
        recorder("flaky", failures=2, from_start=True),
    )
    async with served(isolated_settings, steady, flaky) as app:
        await _effects_table(app)
        user = await sign_up(app)
        for _ in range(3):
            await _trade(user, app)
        await _caught_up(app, "steady")
        await _caught_up(app, "flaky")
        ids = [event_id for event_id, _, _ in await _outbox(app)]
        assert len(ids) == 9
        assert await _effects(app, "steady") == ids
        # Its failed batches were rolled back with their effects and handled again later.
        assert await _effects(app, "flaky") == ids


async def test_a_new_consumer_starts_from_now_unless_it_asks_for_the_history(
    isolated_settings: Settings,
) -> None:
    async with served(isolated_settings) as app:
        await _effects_table(app)
        user = await sign_up(app)
        await _trade(user, app)
        history = [event_id for event_id, _, _ in await _outbox(app)]
    later, everything = recorder("later"), recorder("everything", from_start=True)
    async with served(isolated_settings, later, everything) as app:
        await _caught_up(app, "later")  # its cursor exists from here: it starts now
        await _caught_up(app, "everything")
        user = await sign_up(app)
        await _trade(user, app)
        await _caught_up(app, "later")
        await _caught_up(app, "everything")
        new = [i for i, _, _ in await _outbox(app) if i not in history]
        assert await _effects(app, "later") == new
        assert await _effects(app, "everything") == history + new
