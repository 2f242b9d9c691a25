"""Serve an already-started app over real HTTP on 127.0.0.1 (for real client libraries)."""

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI


@asynccontextmanager
async def live_server(app: FastAPI) -> AsyncIterator[str]:
    """Yield the base URL (http://127.0.0.1:<port>) of `app` served by uvicorn in this loop.

    The app's lifespan must already be running (the `app` fixture does that), so uvicorn's own
    lifespan handling is off.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        lifespan="off",
        log_level="warning",
        ws="websockets-sansio",
        # a request or socket left open by a failing test must not hold the server's shutdown
        timeout_graceful_shutdown=10,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


def free_port() -> int:
    """A TCP port that was free a moment ago on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
