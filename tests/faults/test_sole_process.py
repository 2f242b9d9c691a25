"""Several processes on one PostgreSQL database need Redis: without it, a second process (another
`papertrade serve`, on this host or any other) is refused at start, with what to configure."""

import asyncio
import os
import sys
from pathlib import Path

import pytest

from papertrade.config import Settings
from tests.conftest import PG_URL, running_app
from tests.faults.helpers import redis_server
from tests.liveserver import free_port

PAPERTRADE = str(Path(sys.executable).parent / "papertrade")
needs_postgres = pytest.mark.skipif(not PG_URL, reason="one process per database is PostgreSQL's")


async def _serve(settings: Settings, *extra: str, redis_url: str | None = None) -> tuple[int, str]:
    """Run `papertrade serve` on `settings`' database until it exits (or 60 s): code, output."""
    env = {
        **os.environ,
        "PAPERTRADE_DATABASE_URL": settings.database_url,
        "PAPERTRADE_VAR_DIR": str(settings.var_dir),
        "PAPERTRADE_SECRET_KEY": "test-secret-key",
        "PAPERTRADE_MARKET_SOURCE": "sim",
    }
    env.pop("PAPERTRADE_REDIS_URL", None)
    if redis_url:
        env["PAPERTRADE_REDIS_URL"] = redis_url
    process = await asyncio.create_subprocess_exec(
        PAPERTRADE,
        "serve",
        "--port",
        str(free_port()),
        *extra,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), 60)
    except TimeoutError:
        process.kill()
        output, _ = await process.communicate()
        return -1, output.decode()  # still serving: it was not refused
    return process.returncode or 0, output.decode()


@needs_postgres
async def test_a_second_process_without_redis_is_refused(isolated_settings: Settings) -> None:
    async with running_app(isolated_settings) as app:
        code, output = await _serve(isolated_settings)
        assert code > 0, output
        assert "set PAPERTRADE_REDIS_URL" in output
        assert app.state.engine.active  # the first process serves on


@needs_postgres
async def test_a_process_without_redis_cannot_join_processes_with_it(
    isolated_settings: Settings,
) -> None:
    async with redis_server() as redis:
        shared = isolated_settings.model_copy(update={"redis_url": redis.url})
        async with running_app(shared):
            code, output = await _serve(isolated_settings)
        assert code > 0, output
        assert "uses this PostgreSQL database" in output and "PAPERTRADE_REDIS_URL" in output

        # …nor the other way round: one without Redis holds the database alone.
        async with running_app(isolated_settings):
            code, output = await _serve(isolated_settings, redis_url=redis.url)
        assert code > 0, output
        assert "without Redis" in output


def test_several_workers_without_redis_are_refused_up_front(tmp_path: Path) -> None:
    import subprocess

    env = {
        **os.environ,
        "PAPERTRADE_DATABASE_URL": "postgresql+asyncpg://nobody@127.0.0.1:1/x",
        "PAPERTRADE_VAR_DIR": str(tmp_path),
    }
    env.pop("PAPERTRADE_REDIS_URL", None)
    done = subprocess.run(
        [PAPERTRADE, "serve", "--workers", "2", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert "set PAPERTRADE_REDIS_URL" in done.stderr
