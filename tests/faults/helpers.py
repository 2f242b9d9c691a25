"""Fault-test helpers: PostgreSQL behind a proxy the test cuts, a Redis server the test kills."""

import asyncio
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import redis.asyncio as redis
from sqlalchemy.engine import make_url

from papertrade.config import Settings
from tests.conftest import PG_URL, _drop_postgres_database, _fresh_postgres_database, make_settings
from tests.faults.proxy import TcpProxy
from tests.liveserver import free_port


@asynccontextmanager
async def postgres_behind_proxy(
    name: str, tmp: Path, **overrides: object
) -> AsyncIterator[tuple[Settings, TcpProxy]]:
    """Settings on a fresh PostgreSQL database reached only through a TcpProxy."""
    if not PG_URL:
        pytest.skip("needs PostgreSQL (PAPERTRADE_TEST_POSTGRES_URL)")
    direct = make_url(await _fresh_postgres_database(name))
    proxy = TcpProxy(direct.host or "127.0.0.1", direct.port or 5432)
    await proxy.start()
    through = direct.set(host="127.0.0.1", port=proxy.port)
    try:
        yield make_settings(through.render_as_string(hide_password=False), tmp, **overrides), proxy
    finally:
        await proxy.stop()
        await _drop_postgres_database(name)


class RedisServer:
    """A redis-server of the test's own on a free port, without persistence: kill() is a
    crash, start() again is a Redis that lost everything."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.skip("needs redis-server")
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        self.process = subprocess.Popen(  # noqa: ASYNC220 (starts at once; waited for below)
            [*command, "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL
        )
        for _ in range(200):
            client = redis.Redis.from_url(self.url)
            try:
                if await client.ping():
                    return
            except (redis.ConnectionError, OSError):
                await asyncio.sleep(0.05)
            finally:
                await client.aclose()
        raise AssertionError("redis-server did not start")

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()
        self.process = None


@asynccontextmanager
async def redis_server() -> AsyncIterator[RedisServer]:
    server = RedisServer()
    await server.start()
    try:
        yield server
    finally:
        if server.process is not None:
            server.kill()
