"""`serve --workers N` on a new database: N processes start at once and all come up."""

import asyncio

import pytest

from papertrade.config import Settings
from tests.conftest import PG_URL, client_for, running_app

pytestmark = pytest.mark.skipif(not PG_URL, reason="several processes share PostgreSQL only")


async def test_processes_starting_together_on_a_new_database_all_start(
    isolated_settings: Settings,
) -> None:
    # migrate: each process finds the database empty and the migrations run at start
    starting = [running_app(isolated_settings, migrate=True) for _ in range(3)]
    apps = await asyncio.gather(*(process.__aenter__() for process in starting))
    try:
        for app in apps:
            async with client_for(app) as client:
                health = (await client.get("/healthz")).json()
                assert (health["status"], health["database"], health["processes"]) == ("ok",) * 3
        assert sum(app.state.engine.active for app in apps) == 1
    finally:
        for process in starting:
            await process.__aexit__(None, None, None)
