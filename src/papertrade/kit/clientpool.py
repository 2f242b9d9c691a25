"""Network clients kept open between calls, by name, for reuse.

A client made afresh for every call pays a new connection each time (for an exchange, a TLS
handshake) and its close. Kept clients reuse their keep-alive connections. Past `max_open` the
least recently used is closed; the clients of an owner (an API key) are closed together when it
is rotated away or deleted. A client is anything with an async `close()`.
"""

import asyncio
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

MAX_OPEN = 256


class ClientPool:
    def __init__(self, max_open: int = MAX_OPEN) -> None:
        self._open: OrderedDict[str, tuple[str, Any]] = OrderedDict()  # name → (owner, client)
        self._max_open = max_open
        self._closing: set[asyncio.Task[None]] = set()

    def get(self, name: str, owner: str, make: Callable[[], Any]) -> Any:
        """The open client called `name`, made by `make()` on first use."""
        kept = self._open.get(name)
        if kept is not None:
            self._open.move_to_end(name)
            return kept[1]
        client = make()
        self._open[name] = (owner, client)
        while len(self._open) > self._max_open:
            self._close_later(self._open.popitem(last=False)[1][1])
        return client

    def forget(self, owner: str) -> None:
        """Close every client of `owner`."""
        for name in [name for name, (held_by, _) in self._open.items() if held_by == owner]:
            self._close_later(self._open.pop(name)[1])

    def _close_later(self, client: Any) -> None:
        task = asyncio.get_running_loop().create_task(client.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        clients = [client for _, client in self._open.values()]
        self._open.clear()
        await asyncio.gather(*(c.close() for c in clients), *self._closing, return_exceptions=True)
