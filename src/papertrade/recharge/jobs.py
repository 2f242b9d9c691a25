"""The recharge watcher as a scheduled job (docs/jobs.md): the leader runs it every
`recharge_poll_s` seconds; it does nothing while recharge is off or no order is open."""

from dataclasses import asdict

from papertrade.jobs.declare import scheduled
from papertrade.jobs.run import JobRun
from papertrade.recharge.watcher import watch_once


async def watch_transfers(run: JobRun) -> dict[str, int]:
    return asdict(await watch_once(run.ctx))


WATCH = scheduled("recharge.watch", watch_transfers, every=lambda s: s.recharge_poll_s)

JOBS = (WATCH,)
