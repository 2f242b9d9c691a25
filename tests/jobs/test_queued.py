"""Queued jobs in both modes: status and progress in the jobs table, retries, CPU work elsewhere."""

import os
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from taskiq.kicker import AsyncKicker

from papertrade.jobs.runtime import Jobs
from tests.conftest import client_for
from tests.jobs import sample_jobs
from tests.jobs.helpers import jobs_of, wait_for_job


async def test_a_queued_job_shows_its_status_and_progress(jobs_app: FastAPI) -> None:
    jobs = jobs_of(jobs_app)
    key = uuid.uuid4().hex
    job_id = await jobs.enqueue(sample_jobs.HALFWAY, gate_key=key)

    running = await wait_for_job(jobs_app, job_id, "running")
    while running.progress_text != "half way":
        running = await wait_for_job(jobs_app, job_id, "running")
    assert running.name == "test.halfway" and running.arguments == {"gate_key": key}
    assert running.progress == 0.5 and running.attempts == 1 and running.finished_at is None
    assert running.worker.endswith(f":{os.getpid()}")  # taken by this process

    sample_jobs.gate(key).set()
    done = await wait_for_job(jobs_app, job_id, "succeeded")
    assert done.progress == 1 and done.result == {"attempt": 1} and done.error is None
    assert done.queued_at <= done.started_at <= done.finished_at  # type: ignore[operator]


async def test_a_failing_job_is_retried_then_fails_with_its_error(jobs_app: FastAPI) -> None:
    jobs = jobs_of(jobs_app)
    seen: list[str] = []
    job_id = await jobs.enqueue(sample_jobs.ALWAYS_FAILS, reason="upstream said no")

    failed = await wait_for_job(jobs_app, job_id, "failed", seen=seen)
    assert failed.attempts == 3  # as declared: two retries after the first run
    assert failed.error == "RuntimeError: upstream said no (attempt 3)"
    assert failed.finished_at is not None and failed.result is None
    assert "retrying" in seen  # visible while it waits for the next attempt
    assert seen[-1] == "failed"


async def test_cpu_work_runs_in_another_process_and_the_loop_stays_free(
    jobs_app: FastAPI, tmp_path: Path
) -> None:
    jobs = jobs_of(jobs_app)
    release = tmp_path / f"release-{uuid.uuid4().hex}"
    job_id = await jobs.enqueue(sample_jobs.SPIN_UNTIL, path=str(release))
    await wait_for_job(jobs_app, job_id, "running")

    # The job spins until this file exists, and only this test creates it, after being served:
    # were the job on the event loop, nothing would be served and the job would never end.
    async with client_for(jobs_app) as client:
        for _ in range(3):
            assert (await client.get("/healthz")).status_code == 200
    assert (await wait_for_job(jobs_app, job_id, "running")).status == "running"
    release.touch()

    done = await wait_for_job(jobs_app, job_id, "succeeded", within=60)
    assert isinstance(done.result, int) and done.result != os.getpid()
    assert done.arguments == {"path": str(release)}


async def _retry_due(jobs: Jobs, due: datetime, n: int) -> str:
    """A retry of COUNTED(n) waiting for `due`, as taskiq's retry middleware leaves one."""
    task = jobs.broker.find_task(sample_jobs.COUNTED.name)
    assert task is not None
    job_id = uuid.uuid4().hex
    retry: AsyncKicker[Any, int] = AsyncKicker(task.task_name, jobs.broker, task.labels)
    retry = retry.with_task_id(job_id).with_labels(_retries=1)
    await retry.schedule_by_time(jobs._retries, due, n=n)
    return job_id


async def test_a_retry_due_in_a_minute_that_has_passed_is_still_sent(jobs_app: FastAPI) -> None:
    """Retries wait (in Redis, scaled out) under the minute they are due in. One whose minute
    ended before the leader's scheduler looked (due in a minute's last second, or while the
    leader was busy) was never sent: taskiq-redis could not read the minute back from keys
    under our prefix, and the job stayed `retrying` (a loaded run's retry that never came)."""
    job_id = await _retry_due(jobs_of(jobs_app), datetime.now(UTC) - timedelta(minutes=2), 41)

    done = await wait_for_job(jobs_app, job_id, "succeeded")
    assert (done.result, done.attempts, done.arguments) == (41, 2, {"n": 41})
    assert sample_jobs.RUNS.count(job_id) == 1  # sent once


async def test_a_retry_left_while_no_process_led_is_sent_by_the_next_leader(
    jobs_app: FastAPI,
) -> None:
    """At each poll the leader reads only the last minutes' retries (not the whole of Redis);
    a scheduler that starts reads every retry still waiting, however old: one left half an
    hour ago by a leader that died before sending it goes now."""
    jobs = jobs_of(jobs_app)
    recent = await _retry_due(jobs, datetime.now(UTC), 42)
    await wait_for_job(jobs_app, recent, "succeeded")  # the scheduler has looked, and sends
    await jobs.follow()  # no process of this deployment schedules
    job_id = await _retry_due(jobs, datetime.now(UTC) - timedelta(minutes=30), 43)
    await jobs.lead()

    done = await wait_for_job(jobs_app, job_id, "succeeded")
    assert (done.result, done.attempts) == (43, 2)
    assert sample_jobs.RUNS.count(job_id) == 1
