"""The two modes of the job engine: in process (the session app) and on Redis (PostgreSQL)."""

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import redis.asyncio as redis
from fastapi import FastAPI

from papertrade.config import Settings
from papertrade.kit.deployment import namespace
from tests.conftest import (
    PG_URL,
    _drop_postgres_database,
    _fresh_postgres_database,
    make_settings,
    running_app,
)
from tests.scaleout.test_shared_market import REDIS_URL
from tests.scaleout.test_shared_market import shared_settings as shared_settings  # a fixture


@asynccontextmanager
async def scaled_out(var_dir: Path, worker: str) -> AsyncIterator[Settings]:
    """Settings of a deployment of its own on PostgreSQL and Redis: its own database, so its own
    Redis keys and job queue (dropped after)."""
    client = redis.Redis.from_url(REDIS_URL)
    try:
        await client.ping()
    except (redis.ConnectionError, OSError):
        pytest.skip(f"Redis is not reachable at {REDIS_URL}")
    name = f"papertrade_jobs_{worker}_{uuid.uuid4().hex[:8]}"
    url = await _fresh_postgres_database(name)
    try:
        yield make_settings(url, var_dir, redis_url=REDIS_URL)
    finally:
        keys = [k async for k in client.scan_iter(f"pt:{namespace(url)}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
        await _drop_postgres_database(name)


@pytest.fixture(params=["embedded", "scale-out"])
async def jobs_app(
    request: pytest.FixtureRequest, app: FastAPI, tmp_path: Path, worker_id_name: str
) -> AsyncIterator[FastAPI]:
    """The session app (jobs run in process), or an app of its own whose jobs go through Redis."""
    if request.param == "embedded":
        yield app
        return
    if not PG_URL:
        pytest.skip("the Redis queue serves several processes on PostgreSQL")
    async with scaled_out(tmp_path, worker_id_name) as settings, running_app(settings) as scaled:
        assert scaled.state.jobs.scale_out
        yield scaled
