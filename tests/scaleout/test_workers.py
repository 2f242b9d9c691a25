"""`papertrade serve --workers N`: every worker listens on its own socket, connections spread over
them, a dead worker is replaced and a stop reaches them all."""

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from asyncio.subprocess import Process
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from papertrade.config import Settings
from tests.foundation.helpers import REDIS_URL
from tests.liveserver import free_port

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads sockets with `ss`")
WORKERS = 2


def _listeners(port: int) -> list[int]:
    """Pids of the processes listening on `port`, one entry per listening socket."""
    out = subprocess.run(
        ["ss", "-ltnpH", f"( sport = :{port} )"], capture_output=True, text=True, check=True
    ).stdout
    return [int(pid) for line in out.splitlines() for pid in re.findall(r"pid=(\d+)", line)[:1]]


def _connections_by_pid(port: int) -> Counter[int]:
    out = subprocess.run(
        ["ss", "-tnpH", "state", "established", f"( sport = :{port} )"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return Counter(int(pid) for pid in re.findall(r"pid=(\d+)", out))


async def _until(condition: Callable[[], bool], what: str, within: float = 60) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"not within {within} s: {what}")
        await asyncio.sleep(0.2)


async def _serve(settings: Settings, var_dir: Path, port: int, *, stdout: int) -> Process:
    """`papertrade serve --workers 2` on `port`, on the database of `settings`, with Redis."""
    env = {
        **os.environ,
        "PAPERTRADE_DATABASE_URL": settings.database_url,
        "PAPERTRADE_VAR_DIR": str(var_dir),
        "PAPERTRADE_MARKET_SOURCE": "sim",
        "PAPERTRADE_SECRET_KEY": "test-secret-key",
        # Several processes on one PostgreSQL database need Redis (docs/reliability.md).
        "PAPERTRADE_REDIS_URL": REDIS_URL,
    }
    serve = str(Path(sys.executable).parent / "papertrade")
    return await asyncio.create_subprocess_exec(
        *(serve, "serve", "--port", str(port), "--workers", str(WORKERS), "--log-level", "warning"),
        env=env,
        stdout=stdout,
        stderr=subprocess.STDOUT,
    )


@pytest.fixture
async def served(isolated_settings: Settings, tmp_path: Path) -> AsyncIterator[tuple[int, Process]]:
    """The port and the process of `papertrade serve --workers 2` on a database of its own."""
    if isolated_settings.is_sqlite:
        pytest.skip("several processes share PostgreSQL only")
    port = free_port()
    process = await _serve(isolated_settings, tmp_path, port, stdout=subprocess.DEVNULL)
    try:
        await _until(lambda: len(_listeners(port)) == WORKERS, "both workers listen")
        yield port, process
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
        await asyncio.wait_for(process.wait(), 60)


async def test_each_worker_accepts_on_its_own_socket_and_connections_spread(
    served: tuple[int, Process],
) -> None:
    port, supervisor = served
    workers = _listeners(port)
    assert len(set(workers)) == WORKERS and supervisor.pid not in workers
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(32)]
    try:
        await _until(lambda: sum(_connections_by_pid(port).values()) == 32, "32 connections")
        spread = _connections_by_pid(port)
        # Spread by address hash: a worker below 4 of 32 has odds of about one in a million.
        assert set(spread) == set(workers) and min(spread.values()) >= 4, spread
    finally:
        for client in clients:
            client.close()


async def test_a_killed_worker_is_replaced_and_a_stop_ends_them_all(
    served: tuple[int, Process],
) -> None:
    port, supervisor = served
    victim = _listeners(port)[0]
    os.kill(victim, signal.SIGKILL)
    await _until(
        lambda: len(_listeners(port)) == WORKERS and victim not in _listeners(port),
        "a new worker listens in place of the killed one",
    )
    async with httpx.AsyncClient() as client:
        # The killed worker may have held the market feed's lease: until it expires and another
        # worker takes the feed over, prices are stale and /healthz rightly says "degraded".
        deadline = asyncio.get_running_loop().time() + 60
        while (health := await _health(client, port))["status"] != "ok":
            assert asyncio.get_running_loop().time() < deadline, health
            await asyncio.sleep(0.2)
        for _ in range(8):
            health = await _health(client, port)
            assert (health["status"], health["database"]) == ("ok", "ok"), health
    supervisor.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(supervisor.wait(), 60) == 0
    assert not _listeners(port), "no worker is left listening"


async def _health(client: httpx.AsyncClient, port: int) -> dict[str, str]:
    answer = await client.get(f"http://127.0.0.1:{port}/healthz", timeout=30)
    body: dict[str, str] = answer.json()
    return body


async def test_a_port_in_use_is_refused_rather_than_shared(
    isolated_settings: Settings, tmp_path: Path
) -> None:
    """SO_REUSEPORT must not let a second deployment join a port someone already serves."""
    if isolated_settings.is_sqlite:
        pytest.skip("several processes share PostgreSQL only")
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)  # even a sharing listener
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process = await _serve(isolated_settings, tmp_path, port, stdout=subprocess.PIPE)
        output, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in output.decode()
