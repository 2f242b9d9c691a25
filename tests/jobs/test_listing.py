"""`papertrade jobs`: the latest runs as a table, straight from the jobs table."""

import asyncio
import subprocess
from pathlib import Path

from fastapi import FastAPI

from papertrade.config import Settings
from tests.jobs import sample_jobs
from tests.jobs.helpers import PAPERTRADE, environment, jobs_of, wait_for_job


async def test_papertrade_jobs_lists_the_latest_runs(
    app: FastAPI, settings: Settings, tmp_path: Path
) -> None:
    jobs = jobs_of(app)
    job_id = await jobs.enqueue(sample_jobs.COUNTED, n=7)
    await wait_for_job(app, job_id, "succeeded")
    failed_id = await jobs.enqueue(sample_jobs.ALWAYS_FAILS, reason="listed")
    await wait_for_job(app, failed_id, "failed")

    listing = await asyncio.create_subprocess_exec(
        *(PAPERTRADE, "jobs", "--limit", "5", "--name", "test.always_fails"),
        env=environment(tmp_path, database_url=settings.database_url),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, errors = await asyncio.wait_for(listing.communicate(), 60)
    assert listing.returncode == 0, errors.decode()
    header, first, *_ = out.decode().splitlines()
    assert header.split() == [
        "id",
        "name",
        "status",
        "attempts",
        "progress",
        "queued",
        "(UTC)",
        "worker",
        "note",
    ]
    assert first.split()[:5] == [failed_id[:12], "test.always_fails", "failed", "3", "0%"]
    assert first.endswith("RuntimeError: listed (attempt 3)")
    assert job_id[:12] not in out.decode()  # another job's run
