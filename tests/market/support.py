"""Small helpers shared by the market tests."""

import asyncio
import socket
from collections.abc import Callable


def closed_port_url() -> str:
    """An http URL on a loopback port nothing listens on (connections are refused at once)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


async def eventually(predicate: Callable[[], bool], within: float = 15.0) -> None:
    """Wait until predicate() holds, failing with TimeoutError after `within` seconds."""
    async with asyncio.timeout(within):
        # Polling is the point: the condition belongs to code that exposes no event to wait on.
        while not predicate():  # noqa: ASYNC110
            await asyncio.sleep(0.01)
