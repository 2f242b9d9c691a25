"""Wire encoding: native JSON values and pre-built WebSocket text frames.

A server-to-client frame is never masked, so the bytes of one message are the same for every
client: each message is serialised and framed once, then written to every subscriber.
"""

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from papertrade.kit import plainjson
from papertrade.kit.decimals import usdt6

# Event fields that hold USDT amounts: rounded to the spec's 6 decimals. Other decimals (prices,
# quantities, rates) are sent as plain JSON numbers, as the REST schemas do.
MONEY_FIELDS = frozenset(
    {
        "balance",
        "wallet_balance",
        "equity",
        "available_balance",
        "size_usd",
        "notional_usd",
        "commission",
        "realized_pnl",
        "unrealized_pnl",
        "margin",
        "maintenance_margin",
        "amount",
        "fee",
    }
)


# Values sent as they are: by exact type first, as most of an event's values are (every event of
# every commit is converted, so the checks' order counts).
_PLAIN = frozenset({str, int, bool, float, type(None)})


def native(key: str, value: Any) -> Any:
    """One value in the native convention (Decimal → JSON number; USDT to 6 decimals)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, Decimal):
        return float(usdt6(value)) if key in MONEY_FIELDS else float(value)
    if isinstance(value, dict):
        return {k: native(k, v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [native(key, v) for v in value]
    return value


def native_data(data: Mapping[str, Any]) -> dict[str, Any]:
    """An event's data dict with every value in the native convention."""
    return {k: native(k, v) for k, v in data.items()}


def dumps(message: dict[str, Any]) -> bytes:
    return plainjson.dumps(message)  # 0.0000001, never 1e-7


def text_frame(payload: bytes) -> bytes:
    """A final, unmasked WebSocket text frame (RFC 6455 §5.2) carrying `payload`."""
    size = len(payload)
    if size < 126:
        return bytes((0x81, size)) + payload
    if size < 65_536:
        return bytes((0x81, 126)) + size.to_bytes(2, "big") + payload
    return bytes((0x81, 127)) + size.to_bytes(8, "big") + payload
