"""The engine's background jobs: equity snapshots (scheduled) and funding settlement (queued).

The liquidation sweep is not a job: it must follow every price move (engine/engine.py).
"""

from decimal import Decimal

from papertrade.engine import risk, snapshots
from papertrade.jobs.declare import queued, scheduled
from papertrade.jobs.run import JobRun


async def record_equity_snapshots(run: JobRun) -> dict[str, int | str]:
    """Mark every live portfolio's equity at the current prices (none while they are stale:
    a point of the equity curve at a price nobody could trade on would be wrong)."""
    market = run.ctx.market
    if market is None or market.status().get("stale"):
        return {"marked": 0, "skipped": "the market prices are stale"}
    return {"marked": await snapshots.record_snapshots(run.ctx)}


async def settle_funding(
    run: JobRun, symbol: str, funding_time: int, rate: Decimal, mark: Decimal
) -> int:
    """Charge or pay one funding time of `symbol`; returns the positions settled (0 when that
    time was settled before: a retried or repeated run charges nobody twice)."""
    return await risk.settle_funding(run.ctx, symbol, funding_time, rate, mark)


EQUITY_SNAPSHOTS = scheduled(
    "engine.equity_snapshots",
    record_equity_snapshots,
    every=lambda settings: settings.snapshot_interval_s,
)
# Enqueued by the engine when it sees a funding time pass; a database outage is retried.
SETTLE_FUNDING = queued("engine.settle_funding", settle_funding, attempts=5, retry_delay_s=5)

JOBS = (EQUITY_SNAPSHOTS, SETTLE_FUNDING)
