"""A small real WebSocket client (the `websockets` library) for the /v1/ws tests."""

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from websockets.asyncio.client import ClientConnection, connect


def ws_url(live_url: str, path: str = "/v1/ws") -> str:
    return live_url.replace("http://", "ws://") + path


class Socket:
    """A connected client that reads JSON messages and remembers what it has not consumed."""

    def __init__(self, conn: ClientConnection):
        self.conn = conn
        self.seen: list[dict[str, Any]] = []

    async def send(self, **message: Any) -> None:
        await self.conn.send(json.dumps(message))

    async def recv(self, within: float = 15) -> dict[str, Any]:
        raw = await asyncio.wait_for(self.conn.recv(), within)
        message: dict[str, Any] = json.loads(raw)
        self.seen.append(message)
        return message

    async def wait_for(
        self, match: Callable[[dict[str, Any]], bool], within: float = 15
    ) -> dict[str, Any]:
        """The next message `match` accepts (others are skipped)."""
        deadline = asyncio.get_running_loop().time() + within
        while True:
            remaining = deadline - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise AssertionError(f"no matching message within {within} s")
            message = await self.recv(remaining)
            if match(message):
                return message

    async def wait_type(self, kind: str, within: float = 15) -> dict[str, Any]:
        return await self.wait_for(lambda m: m.get("type") == kind, within)

    async def subscribe(self, *channels: str, request_id: int | str = 1) -> dict[str, Any]:
        await self.send(op="subscribe", channels=list(channels), id=request_id)
        return await self.wait_for(
            lambda m: m.get("id") == request_id and m.get("type") in ("subscribed", "error")
        )


@asynccontextmanager
async def socket(
    live_url: str,
    key: str | None = None,
    *,
    path: str = "/v1/ws",
    headers: dict[str, str] | None = None,
) -> AsyncIterator[Socket]:
    all_headers = dict(headers or {})
    if key is not None:
        all_headers["Authorization"] = f"Bearer {key}"
    # An unbounded client queue: a test that stops reading still sees the close frame promptly.
    async with connect(
        ws_url(live_url, path), additional_headers=all_headers, max_queue=None
    ) as conn:
        sock = Socket(conn)
        welcome = await sock.recv()
        assert welcome["type"] == "welcome", welcome
        yield sock


class RawSocket:
    """A bare TCP WebSocket client that can stop reading (a stalled consumer)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader = reader
        self.writer = writer

    @classmethod
    async def open(cls, live_url: str, key: str, rcvbuf: int = 4096) -> "RawSocket":
        import base64
        import os
        import socket as sockets

        host, port = live_url.removeprefix("http://").split(":")
        sock = sockets.socket(sockets.AF_INET, sockets.SOCK_STREAM)
        sock.setsockopt(sockets.SOL_SOCKET, sockets.SO_RCVBUF, rcvbuf)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
        # A small reader limit: asyncio stops reading the socket once 8 KiB sit unread.
        reader, writer = await asyncio.open_connection(sock=sock, limit=4096)
        nonce = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET /v1/ws HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {nonce}\r\n"
                f"Sec-WebSocket-Version: 13\r\nAuthorization: Bearer {key}\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 101"), head
        return cls(reader, writer)

    def send(self, **message: Any) -> None:
        import os

        payload = json.dumps(message).encode()
        assert len(payload) < 126
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        self.writer.write(bytes((0x81, 0x80 | len(payload))) + mask + masked)

    async def drain_until_closed(self, within: float = 5) -> bool:
        """Read everything left; True when the server ended the connection."""
        try:
            async with asyncio.timeout(within):
                while await self.reader.read(65536):
                    pass
        except TimeoutError:
            return False
        except ConnectionError:
            return True
        return True

    def close(self) -> None:
        self.writer.close()
