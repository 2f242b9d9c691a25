"""One connected WebSocket client and how bytes reach it.

Two writers, chosen per connection:

- direct: under uvicorn's websockets-sansio protocol (the default when the `websockets` package
  is installed) a pre-built frame is written straight to the connection's transport. A broadcast
  then costs one `write` per client instead of an ASGI message, a frame build and a task switch.
  A client whose unsent backlog passes `max_buffer` bytes is dropped (the transport is aborted),
  so a stalled reader never holds memory or delays anyone else.
- asgi: any other server gets the portable path, a bounded queue drained by a writer task
  through `websocket.send_text`; a full queue drops the client the same way.
"""

import asyncio
import contextlib
import logging
import socket
from collections import deque
from typing import Any

from starlette.websockets import WebSocket

# The one server whose connection state we know how to share safely (uvicorn is a dependency).
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from papertrade.auth.principal import Principal

log = logging.getLogger("papertrade.ws")

CLOSE_TIMEOUT_S = 1.0
# The kernel's own send buffer for a socket; autotuned it grows to megabytes, which would let a
# stalled reader hold that much before `max_buffer` (our backlog limit) ever sees a byte.
SOCKET_SEND_BUFFER = 128 * 1024


def _direct_protocol(websocket: WebSocket) -> Any | None:
    """uvicorn's connection object behind this socket, when it is the sansio protocol."""
    # Starlette keeps the server's own `receive` (middleware wraps only `send`), and under
    # uvicorn that is a bound method of the connection's protocol object.
    owner = getattr(getattr(websocket, "_receive", None), "__self__", None)
    if isinstance(owner, WebSocketsSansIOProtocol):
        return owner
    return None


class Client:
    """A socket, its principal and subscriptions, and a bounded path for outgoing bytes."""

    def __init__(
        self,
        websocket: WebSocket,
        *,
        max_buffer: int,
        max_queue: int = 10_000,
        direct: bool = True,
    ):
        self.websocket = websocket
        self.principal: Principal | None = None
        self.topics: set[str] = set()
        # Frames (direct) or payloads awaiting the next flush: one as bytes, several as a list.
        self.pending: bytes | list[bytes] | None = None
        self.dropped = False
        self.closing = False
        self.max_buffer = max_buffer
        self.max_queue = max_queue
        self._proto = _direct_protocol(websocket) if direct else None
        self.direct = self._proto is not None
        if self._proto is not None:
            sock = self._proto.transport.get_extra_info("socket")
            with contextlib.suppress(OSError, AttributeError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_SEND_BUFFER)
        self._queue: deque[bytes] = deque()
        self._queued = 0  # bytes in the queue
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self.handler: asyncio.Task[Any] | None = None  # the endpoint's task, ended on a drop
        if not self.direct:
            self._writer = asyncio.create_task(self._drain(), name="ws-writer")

    @property
    def portfolio_ids(self) -> set[int]:
        found = set()
        for topic in self.topics:
            kind, _, rest = topic.partition(":")
            if kind in ("orders", "positions", "balance", "signals") and rest.isdigit():
                found.add(int(rest))
        return found

    # -- writing -----------------------------------------------------------------------------

    def write(self, items: bytes | list[bytes]) -> None:
        """Send frames (direct) or payloads (asgi) now, or drop a client that fell behind."""
        if self.dropped or self.closing:
            return
        proto = self._proto
        if proto is not None:
            if proto.close_sent or proto.disconnected:
                return
            transport = proto.transport
            if transport.get_write_buffer_size() > self.max_buffer:
                self.drop("slow consumer: unsent backlog above the limit")
                return
            transport.write(items if isinstance(items, bytes) else b"".join(items))
            return
        if isinstance(items, bytes):
            items = [items]
        size = sum(map(len, items))
        if self._queued + size > self.max_buffer or len(self._queue) + len(items) > self.max_queue:
            self.drop("slow consumer: send queue full")
            return
        self._queue.extend(items)
        self._queued += size
        self._wake.set()

    async def _drain(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._queue:
                payload = self._queue.popleft()
                self._queued -= len(payload)
                try:
                    await self.websocket.send_text(payload.decode())
                except Exception:  # the peer went away: the endpoint sees the disconnect
                    self.dropped = True
                    return

    def drop(self, reason: str) -> None:
        """Cut the connection at once: nothing more is queued or written."""
        if self.dropped:
            return
        self.dropped = True
        self.pending = None
        log.info("dropping WebSocket client: %s", reason)
        if self._writer is not None:
            self._writer.cancel()
        if self._proto is not None:
            # The server sees the connection lost and ends the endpoint with a disconnect.
            self._proto.transport.abort()
        elif self.handler is not None and self.handler is not asyncio.current_task():
            self.handler.cancel()  # the endpoint sees `dropped` and returns

    async def close(self, code: int, reason: str = "") -> None:
        """A clean close handshake, bounded in time; a client that does not read is dropped."""
        if self.dropped or self.closing:
            return
        self.closing = True
        if self._writer is not None:
            # Let already-queued messages out first (bounded by the same timeout).
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_TIMEOUT_S):
                    while self._queue:  # noqa: ASYNC110 - the writer owns the queue's event
                        await asyncio.sleep(0.01)
            self._writer.cancel()
        try:
            async with asyncio.timeout(CLOSE_TIMEOUT_S):
                await self.websocket.close(code=code, reason=reason[:120])
        except Exception:  # timeout, or the peer already went away
            self.closing = False
            self.drop(f"close {code} did not complete")

    def stop(self) -> None:
        """Release the writer task (the endpoint calls this when the socket ends)."""
        if self._writer is not None:
            self._writer.cancel()
