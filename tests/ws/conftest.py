"""Apps of their own for tests that need other WebSocket settings (fast re-checks, small buffers,
Redis): each gets a fresh database, so its engine never touches the session app's orders."""

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from tests.conftest import (
    PG_URL,
    _drop_postgres_database,
    _fresh_postgres_database,
    make_settings,
    running_app,
)
from tests.liveserver import live_server


@asynccontextmanager
async def fresh_database(name: str, tmp: Path) -> AsyncIterator[str]:
    """A database of its own (dropped afterwards on PostgreSQL; the pid keeps runs apart)."""
    if not PG_URL:
        yield f"sqlite+aiosqlite:///{tmp / name}.db"
        return
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    database = f"papertrade_test_{worker}_{os.getpid()}_{name}"
    url = await _fresh_postgres_database(database)
    try:
        yield url
    finally:
        await _drop_postgres_database(database)


@asynccontextmanager
async def served_app(settings: Any) -> AsyncIterator[tuple[FastAPI, str]]:
    async with running_app(settings) as app, live_server(app) as url:
        yield app, url


@pytest.fixture(scope="module")
async def fast_app(
    tmp_path_factory: pytest.TempPathFactory, uses_database: None
) -> AsyncIterator[tuple[FastAPI, str]]:
    """Credentials re-checked every 0.2 s, a 1 s auth deadline, a 64 KiB send backlog limit."""
    tmp = tmp_path_factory.mktemp("ws_fast")
    async with fresh_database("ws_fast", tmp) as url:
        settings = make_settings(
            url,
            tmp,
            ws_revalidate_s=0.2,
            ws_auth_timeout_s=1.0,
            ws_max_buffer_bytes=64 * 1024,
            ws_heartbeat_s=0.5,
        )
        async with served_app(settings) as served:
            yield served
