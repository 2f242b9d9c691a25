"""/healthz names each dependency; a process that still serves correctly what it can answers 200
"degraded", one that cannot answers 503."""

import asyncio
from pathlib import Path

import pytest

from tests.conftest import client_for, make_settings, running_app

# SQLite's own file, on whichever database the run uses (tests/databases.py)
pytestmark = pytest.mark.one_database


async def test_a_stopped_market_feed_is_degraded_not_down(tmp_path: Path) -> None:
    settings = make_settings(f"sqlite+aiosqlite:///{tmp_path / 'health.db'}", tmp_path)
    async with running_app(settings) as app, client_for(app) as client:
        # Until the simulation's first tick the market is rightly "stale": wait for that tick.
        deadline = asyncio.get_running_loop().time() + 30
        while app.state.ctx.market.status()["stale"]:
            assert asyncio.get_running_loop().time() < deadline, "no first tick within 30 s"
            await asyncio.sleep(0.05)
        healthy = await client.get("/healthz")
        assert (healthy.status_code, healthy.json()["status"]) == (200, "ok"), healthy.json()
        await app.state.ctx.market.stop()  # no more prices: orders are refused as stale
        health = await client.get("/healthz")
        assert health.status_code == 200  # reads, cancels and the rest still work
        assert health.json() == {
            "status": "degraded",
            "database": "ok",
            "disk": "ok",
            "redis": "unused",
            "market": "stale",
        }
