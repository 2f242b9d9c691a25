"""Driving the chain in tests: trades on a portfolio, the consumer caught up, a day sealed."""

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from fastapi import FastAPI
from sqlalchemy import func, select

from papertrade.chain.attest import anchor_queued, seal_finished_days
from papertrade.chain.signing import attestation_key
from papertrade.models import OutboxCursor, OutboxEvent
from tests.fakes.ots_calendar import CalendarState, calendar_app
from tests.liveserver import live_server

DAY_MS = 86_400_000


async def chained(app: FastAPI, within: float = 30) -> None:
    """Until the chain consumer has handled every outbox event so far."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        async with app.state.ctx.db.reader() as session:
            last = await session.scalar(select(func.max(OutboxEvent.id))) or 0
            cursor = await session.get(OutboxCursor, "chain.record")
        if cursor is not None and cursor.last_id >= last:
            return
        assert asyncio.get_running_loop().time() < deadline, "the chain did not catch up"
        await asyncio.sleep(0.05)


@dataclass
class Calendar:
    url: str
    state: CalendarState


@asynccontextmanager
async def fake_calendar(failures: int = 0) -> AsyncIterator[Calendar]:
    state = CalendarState(failures_left=failures)
    async with live_server(calendar_app(state)) as url:
        state.url = url
        yield Calendar(url, state)


async def seal_today(app: FastAPI, calendars: list[str]) -> tuple[list[str], dict[str, int]]:
    """Seal as the job would tomorrow (today's events are then a finished day), then anchor."""
    ctx = app.state.ctx
    async with ctx.transaction() as uow:
        days = await seal_finished_days(
            uow.session, attestation_key(ctx.settings), calendars, uow.now() + DAY_MS
        )
    return days, await anchor_queued(ctx)
