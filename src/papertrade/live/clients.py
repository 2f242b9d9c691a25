"""The exchange client of a live account's key, kept open between calls (kit/clientpool.py).

A fresh ccxt client per call costs a new connection (a TLS handshake to the exchange: one to
three round trips) and, when closed, ccxt's wait of `timeout_on_exit` (250 ms) for the transport
to shut: a quarter of a second added to every kill switch, mirrored order and reconciliation.
A key's clients are closed when the account is rotated or deleted (`ctx.exchanges.forget(key)`).
"""

import hashlib
from typing import Any

from papertrade.context import AppContext
from papertrade.live import exchange


def client(ctx: AppContext, api_key: str, api_secret: str) -> Any:
    """The open client for this key at the configured exchange and timeout."""
    url, timeout_ms = ctx.settings.live_exchange_url, ctx.settings.live_exchange_timeout_ms
    parts = (api_key, api_secret, url or "", str(timeout_ms))
    name = hashlib.sha256("\n".join(parts).encode()).hexdigest()
    return ctx.exchanges.get(
        name, api_key, lambda: exchange.client(api_key, api_secret, url, timeout_ms)
    )
