"""The in-process registry of sockets and topics, and the one place bytes are flushed.

Publishing never awaits a client: a message is serialised and framed once, appended to each
subscriber's pending list, and a flush on a later loop turn writes each client's pending bytes in
one call. Messages published in the same turn (a feed tick for many symbols, a batch of events
from one commit) reach a client in one write, in publish order. With `flush_ms > 0` a client is
written at most once per that many milliseconds, which trades a bounded delay for fewer system
calls when messages arrive faster than that.
"""

import asyncio
import time
from collections.abc import Iterable

from papertrade.ws.client import Client
from papertrade.ws.frames import text_frame


class Hub:
    """Clients, topic subscriptions and coalesced writes."""

    def __init__(self, *, flush_ms: float = 0.0, max_buffer: int = 1_048_576):
        self.flush_s = max(0.0, flush_ms) / 1000
        self.max_buffer = max_buffer
        self.clients: set[Client] = set()
        self.topics: dict[str, set[Client]] = {}
        self._dirty: list[Client] = []
        self._handle: asyncio.Handle | None = None
        self._last_flush = 0.0
        self.published = 0  # messages handed to clients (one per subscriber)
        self.writes = 0  # write calls made

    # -- membership ----------------------------------------------------------------------------

    def attach(self, client: Client) -> None:
        self.clients.add(client)

    def detach(self, client: Client) -> None:
        """Forget a client and every subscription it held."""
        self.clients.discard(client)
        for topic in client.topics:
            subscribers = self.topics.get(topic)
            if subscribers is not None:
                subscribers.discard(client)
                if not subscribers:
                    del self.topics[topic]
        client.topics.clear()
        client.pending = None
        client.stop()

    def subscribe(self, client: Client, topic: str) -> None:
        self.topics.setdefault(topic, set()).add(client)
        client.topics.add(topic)

    def unsubscribe(self, client: Client, topic: str) -> None:
        client.topics.discard(topic)
        subscribers = self.topics.get(topic)
        if subscribers is not None:
            subscribers.discard(client)
            if not subscribers:
                del self.topics[topic]

    def has(self, topic: str) -> bool:
        return topic in self.topics

    # -- publishing ----------------------------------------------------------------------------

    def publish(self, topic: str, payload: bytes) -> None:
        """Send one serialised message to every subscriber of `topic`."""
        subscribers = self.topics.get(topic)
        if subscribers:
            self.publish_to(subscribers, payload)

    def publish_to(self, clients: Iterable[Client], payload: bytes) -> None:
        """Queue one message for each of `clients`; the frame is built once for all of them."""
        frame = text_frame(payload)
        dirty = self._dirty
        count = 0
        for client in clients:
            item = frame if client.direct else payload
            pending = client.pending
            if pending is None:
                # One message is kept as is: no list per client on the common path.
                client.pending = item
                dirty.append(client)
            elif isinstance(pending, bytes):
                client.pending = [pending, item]
            else:
                pending.append(item)
            count += 1
        self.published += count
        if self._handle is None and dirty:
            self._handle = asyncio.get_running_loop().call_soon(self._flush)

    def send(self, client: Client, payload: bytes) -> None:
        """Queue one message for one client, ordered after what was published to it before."""
        self.publish_to((client,), payload)

    def _flush(self) -> None:
        wait = self._last_flush + self.flush_s - time.monotonic()
        if wait > 0:
            self._handle = asyncio.get_running_loop().call_later(wait, self._flush)
            return
        self._handle = None
        self.flush_now()

    def flush_now(self) -> None:
        """Write every client's pending bytes at once."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        dirty, self._dirty = self._dirty, []
        for client in dirty:
            items, client.pending = client.pending, None
            if items is not None:
                client.write(items)
        self.writes += len(dirty)
        self._last_flush = time.monotonic()
