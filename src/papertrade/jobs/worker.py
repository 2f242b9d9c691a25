"""`papertrade worker`: a process that takes jobs from the deployment's Redis queue.

It serves no HTTP and never runs the engine or the scheduler (the elected API process does).
It follows the engine leader's prices through Redis like any follower, so jobs that need marks
(equity snapshots) see the same prices, and it publishes the events of its jobs (a funding
charge) to every process's WebSocket clients the way an API process does.
"""

import asyncio
import logging
import signal

from papertrade import migrate
from papertrade.config import Settings
from papertrade.context import AppContext
from papertrade.faults.sole import SecondProcessRefused, SoleProcessGuard
from papertrade.jobs.broker import is_scale_out, queue_name
from papertrade.jobs.catalogue import JOBS
from papertrade.jobs.runtime import Jobs
from papertrade.market.from_settings import feed_from_settings, shared_feed
from papertrade.ws import service as ws_service

log = logging.getLogger("papertrade.jobs.worker")


def refusal(settings: Settings) -> str | None:
    """Why this configuration has no queue for a worker to take jobs from (None: it has one)."""
    if not settings.redis_url:
        return (
            "papertrade worker takes jobs from the Redis queue of a scaled-out deployment: set "
            "PAPERTRADE_REDIS_URL (and a PostgreSQL PAPERTRADE_DATABASE_URL). Without Redis, "
            "`papertrade serve` runs every job in its own process."
        )
    if not is_scale_out(settings):
        return (
            "papertrade worker needs PostgreSQL (PAPERTRADE_DATABASE_URL=postgresql+asyncpg://"
            "...): with SQLite, `papertrade serve` is the one process and runs every job itself."
        )
    return None


async def run(settings: Settings) -> None:
    """Consume jobs until SIGINT or SIGTERM, then let running jobs finish and stop."""
    # A worker shares the database like any process with Redis (faults/sole.py): it may not
    # join a process that holds the database alone, without Redis.
    guard = SoleProcessGuard(settings.database_url, with_redis=True)
    try:
        await guard.start()
    except SecondProcessRefused as exc:
        raise SystemExit(f"papertrade worker: {exc}") from exc
    ctx = AppContext.build(settings)
    await migrate.upgrade(ctx.db.engine)
    feed = shared_feed(settings, await feed_from_settings(settings), ctx.redis)
    assert feed is not None  # scale-out, checked by refusal()
    ctx.market = feed  # never leads: only API processes stand for the engine election
    realtime = await ws_service.start(ctx)
    jobs = Jobs(ctx, JOBS, consume=True)
    await feed.start()
    await jobs.start()
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)
    log.info("worker %s takes jobs from %s", jobs.worker, queue_name(settings))
    try:
        await stopping.wait()
    finally:
        log.info("worker %s stopping", jobs.worker)
        await jobs.stop()
        await realtime.stop()
        await feed.stop()
        await ctx.close()
        await guard.stop()
