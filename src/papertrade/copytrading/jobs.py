"""Copy trading's scheduled job (docs/jobs.md): the weekly revenue-share settlement and the
portfolio stops, checked every `copy_settle_poll_s` seconds by the leader."""

from papertrade.copytrading.settlement import run_due
from papertrade.jobs.declare import scheduled
from papertrade.jobs.run import JobRun
from papertrade.orders.pricing import Venue


async def settle_weekly(run: JobRun) -> dict[str, int]:
    return await run_due(run.ctx, Venue.of(run.ctx))


SETTLE = scheduled("copy.settle", settle_weekly, every=lambda s: s.copy_settle_poll_s)

JOBS = (SETTLE,)
