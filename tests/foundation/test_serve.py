"""`papertrade serve` as users run it: connections outlive bots' loops and the log keeps no
credentials."""

import asyncio
import itertools
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.liveserver import free_port

BOT_LOOP_S = 6  # freqtrade polls every 5 s; uvicorn's own keep-alive is also 5 s


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """The port and the log file of `papertrade serve` on SQLite in a fresh data directory (one
    for the module: starting the service is most of each test's time)."""
    tmp_path = tmp_path_factory.mktemp("serve")
    port = free_port()
    log = tmp_path / "serve.log"
    env = {
        **os.environ,
        "PAPERTRADE_VAR_DIR": str(tmp_path / "var"),
        "PAPERTRADE_MARKET_SOURCE": "sim",
    }
    env.pop("PAPERTRADE_DATABASE_URL", None)
    env.pop("PAPERTRADE_SECRET_KEY", None)
    serve = str(Path(sys.executable).parent / "papertrade")
    with log.open("wb") as out:
        process = subprocess.Popen(
            [serve, "serve", "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the service did not start"
            time.sleep(0.2)
        yield port, log
    finally:
        process.terminate()
        process.wait(30)


def _get(conn: socket.socket, path: str) -> bytes:
    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return conn.recv(65536)


def test_an_idle_connection_outlives_a_bots_loop(served: tuple[int, Path]) -> None:
    port, _ = served
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        assert _get(conn, "/healthz").startswith(b"HTTP/1.1 200")
        time.sleep(BOT_LOOP_S)  # a bot sleeping between two polls on its kept-alive connection
        # Had the server closed the connection, this request would fail with a reset or EOF.
        assert _get(conn, "/fapi/v1/ping").startswith(b"HTTP/1.1 200")


async def test_credentials_never_reach_the_log(served: tuple[int, Path]) -> None:
    port, log = served
    token = "whk_" + "s3cr3t" * 6
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        for path in (f"/webhook/tv/{token}", f"/api/webhook/tv/{token}?x=1"):
            refused = await client.post(path, content=b"buy BTCUSDT 0.002")
            assert refused.status_code in (401, 404)
        await client.get("/fapi/v2/balance", params={"timestamp": "1", "signature": "f00d" * 16})
    # The access log line is written after the response: wait for the last request's.
    async with asyncio.timeout(30):
        for _ in itertools.count():
            if "/fapi/v2/balance" in (text := log.read_text()):
                break
            await asyncio.sleep(0.05)
    assert "/webhook/tv/***" in text  # the request was logged, its token was not
    assert "s3cr3t" not in text
    assert "f00d" not in text and "signature=***" in text
