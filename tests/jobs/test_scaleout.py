"""Two API processes on one PostgreSQL database and Redis: each job runs once."""

import asyncio
from collections import Counter

import pytest

from papertrade.config import Settings
from papertrade.engine.jobs import EQUITY_SNAPSHOTS
from tests.conftest import PG_URL, running_app, sign_up
from tests.jobs import sample_jobs
from tests.jobs.helpers import jobs_of, runs_of, wait_for_job

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="several processes share PostgreSQL and Redis only"
)


async def test_a_scheduled_job_runs_once_per_tick_with_two_processes(
    shared_settings: Settings,
) -> None:
    settings = shared_settings.model_copy(update={"snapshot_interval_s": 1})
    async with running_app(settings) as first, running_app(settings) as second:
        assert first.state.engine.active and not second.state.engine.active
        user = await sign_up(second)
        pid = (await user.portfolio())["id"]
        deadline = asyncio.get_running_loop().time() + 30
        while len(done := await _marking_runs(first)) < 4:
            assert asyncio.get_running_loop().time() < deadline, done
            await asyncio.sleep(0.1)
        curve = (await user.get(f"/v1/portfolios/{pid}/equity-curve")).json()
        runs = await runs_of(first, EQUITY_SNAPSHOTS.name)
        await user.client.aclose()
    # The scheduler ticks once a second, in the elected process only: one run per tick, and one
    # point of the curve per run that marked the portfolio.
    ticks = Counter(run.queued_at // 1000 for run in runs)
    assert ticks.most_common(1)[0][1] == 1, ticks
    times = [point["time"] for point in curve]
    assert len(times) == len(set(times)) and len(times) >= 4
    assert len(times) <= len([r for r in runs if r.status == "succeeded"])


async def _marking_runs(app: object) -> list[object]:
    runs = await runs_of(app, EQUITY_SNAPSHOTS.name)  # type: ignore[arg-type]
    return [r for r in runs if r.status == "succeeded" and r.result["marked"] >= 1]


async def test_a_queued_job_is_taken_by_exactly_one_process(shared_settings: Settings) -> None:
    async with running_app(shared_settings) as first, running_app(shared_settings) as second:
        jobs_of(second)
        ids = [await jobs_of(first).enqueue(sample_jobs.COUNTED, n=n) for n in range(20)]
        for job_id in ids:
            row = await wait_for_job(first, job_id, "succeeded")
            assert row.attempts == 1
    assert sorted(job_id for job_id in sample_jobs.RUNS if job_id in ids) == sorted(ids)
