"""Exchange clients kept open between calls, one per key (and host and timeout).

A fresh ccxt client per call costs a new connection (a TLS handshake to the exchange: one to
three round trips) and, when closed, ccxt's wait of `timeout_on_exit` (250 ms) for the transport
to shut: a quarter of a second added to every kill switch, mirrored order and reconciliation.
Kept clients reuse their keep-alive connections. The least recently used past MAX_OPEN is
closed, and a key's clients are closed when the account is rotated or deleted.
"""

import asyncio
import hashlib
from collections import OrderedDict
from typing import Any

from papertrade.live import exchange

MAX_OPEN = 256


class ExchangeClients:
    def __init__(self, max_open: int = MAX_OPEN) -> None:
        self._open: OrderedDict[str, tuple[str, Any]] = OrderedDict()  # name → (api key, client)
        self._max_open = max_open
        self._closing: set[asyncio.Task[None]] = set()

    def get(self, api_key: str, api_secret: str, base_url: str | None, timeout_ms: int) -> Any:
        """The open client for this key, made on first use."""
        parts = (api_key, api_secret, base_url or "", str(timeout_ms))
        name = hashlib.sha256("\n".join(parts).encode()).hexdigest()
        kept = self._open.get(name)
        if kept is not None:
            self._open.move_to_end(name)
            return kept[1]
        client = exchange.client(api_key, api_secret, base_url, timeout_ms)
        self._open[name] = (api_key, client)
        while len(self._open) > self._max_open:
            self._close_later(self._open.popitem(last=False)[1][1])
        return client

    def forget(self, api_key: str) -> None:
        """Close the clients of a key that was rotated away or deleted."""
        for name in [name for name, (key, _) in self._open.items() if key == api_key]:
            self._close_later(self._open.pop(name)[1])

    def _close_later(self, client: Any) -> None:
        task = asyncio.get_running_loop().create_task(client.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        clients = [client for _, client in self._open.values()]
        self._open.clear()
        await asyncio.gather(*(c.close() for c in clients), *self._closing, return_exceptions=True)
