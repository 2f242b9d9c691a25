"""Several processes on one PostgreSQL database need Redis: without it, a second process (another
`papertrade serve`, on this host or any other) is refused at start, with what to configure."""

import asyncio
import os
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from papertrade.config import Settings
from papertrade.faults import sole
from tests.conftest import PG_URL, running_app
from tests.faults.helpers import postgres_behind_proxy, redis_server
from tests.liveserver import free_port
from tests.reliability import forks

# opens databases of its own (tests/databases.py)
pytestmark = pytest.mark.database

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
    settings.var_dir.mkdir(parents=True, exist_ok=True)
    log = settings.var_dir / f"serve-{uuid.uuid4().hex[:8]}.log"
    command = [PAPERTRADE, "serve", "--port", str(free_port()), *extra]
    code = await forks.run(command, env, log, within=60)
    output = log.read_text()
    return (-1, output) if code is None else (code, output)  # -1: still serving, not refused


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


@needs_postgres
async def test_a_job_worker_cannot_join_a_process_without_redis(
    isolated_settings: Settings,
) -> None:
    async with redis_server() as redis, running_app(isolated_settings):
        env = {
            **os.environ,
            "PAPERTRADE_DATABASE_URL": isolated_settings.database_url,
            "PAPERTRADE_VAR_DIR": str(isolated_settings.var_dir),
            "PAPERTRADE_SECRET_KEY": "test-secret-key",
            "PAPERTRADE_REDIS_URL": redis.url,
        }
        worker = await asyncio.create_subprocess_exec(
            PAPERTRADE, "worker", env=env, stderr=asyncio.subprocess.PIPE
        )
        _, said = await asyncio.wait_for(worker.communicate(), 60)
    assert worker.returncode != 0
    assert "uses this PostgreSQL database without Redis" in said.decode()


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


@needs_postgres
async def test_the_lock_is_taken_again_after_a_database_outage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sole, "WATCH_S", 0.2)
    name = f"papertrade_fault_sole_{uuid.uuid4().hex[:8]}"
    async with postgres_behind_proxy(name, tmp_path) as (settings, proxy):
        direct = make_url(settings.database_url).set(host=proxy.target[0], port=proxy.target[1])
        guard = sole.SoleProcessGuard(settings.database_url, with_redis=False)
        await guard.start()
        try:
            proxy.cut()  # the database goes away: its session, and the lock, end
            intruder = await asyncpg.connect(
                direct.set(drivername="postgresql").render_as_string(hide_password=False)
            )
            try:  # meanwhile another process (without Redis) takes the database
                assert await _eventually(
                    lambda: intruder.fetchval("SELECT pg_try_advisory_lock($1)", sole.LOCK_KEY)
                )
                proxy.restore()
                assert await _eventually(lambda: _value(guard.problem is not None))
                assert "PAPERTRADE_REDIS_URL" in (guard.problem or "")
            finally:
                await intruder.close()
            assert await _eventually(lambda: _value(guard.problem is None))  # held again
        finally:
            await guard.stop()


async def _value(value: bool) -> bool:
    return value


async def _eventually(check: Callable[[], Awaitable[Any]], within: float = 30) -> bool:
    deadline = asyncio.get_running_loop().time() + within
    while not await check():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.1)
    return True
