"""The user data stream's listenKey: POST (start), PUT (keep alive), DELETE (close).

API key only (X-MBX-APIKEY), no signature: extra `timestamp`, `signature` and `listenKey`
parameters are accepted (Hummingbot signs its PUT; ccxt sends none). One live key per key pair:
a repeated POST returns the same key and extends it; keys live 60 minutes without a PUT.
"""

from typing import Any

from papertrade.fapi.auth import _api_key, _load_key, charge, client_ip
from papertrade.fapi.dispatch import Call, endpoint
from papertrade.fapi.errors import FapiError
from papertrade.fapi.stream.keys import ListenKey
from papertrade.fapi.stream.service import BinanceStreams
from papertrade.kit.time import now_ms

UNKNOWN = "This listenKey does not exist."


async def _caller(call: Call) -> tuple[BinanceStreams, int, int]:
    """The streams service and the (key pair id, portfolio id) of the API key header."""
    ctx = call.ctx
    try:
        key = await _load_key(ctx, _api_key(call.request))
    except FapiError:
        await charge(ctx, f"ip:{client_ip(call.request)}", 1, call.meter)
        raise
    await charge(ctx, f"compat:{key.id}", 1, call.meter, tier=key.tier(now_ms()))
    service = getattr(call.request.app.state, "binance_streams", None)
    if not isinstance(service, BinanceStreams):
        raise FapiError(
            503, -1001, "Internal error; unable to process your request. Please try again."
        )
    return service, key.id, key.portfolio_id


async def _existing(call: Call, service: BinanceStreams, key_id: int) -> ListenKey:
    """The key a PUT or DELETE names, or the key pair's live key when none is named."""
    named = call.params.values.get("listenKey")
    if named:
        found = await service.keys.lookup(named)
    else:
        current = await service.keys.issue_peek(key_id)
        found = await service.keys.lookup(current) if current else None
    if found is None or found.key_id != key_id:
        raise FapiError(400, -1125, UNKNOWN)
    return found


@endpoint("POST", "/v1/listenKey")
async def start_stream(call: Call) -> Any:
    service, key_id, portfolio_id = await _caller(call)
    return {"listenKey": await service.keys.issue(key_id, portfolio_id)}


@endpoint("PUT", "/v1/listenKey")
async def keepalive_stream(call: Call) -> Any:
    service, key_id, _ = await _caller(call)
    found = await _existing(call, service, key_id)
    if not await service.keys.keepalive(key_id, found.key):
        raise FapiError(400, -1125, UNKNOWN)
    return {}


@endpoint("DELETE", "/v1/listenKey")
async def close_stream(call: Call) -> Any:
    service, key_id, _ = await _caller(call)
    found = await _existing(call, service, key_id)
    if not await service.keys.close(key_id, found.key):
        raise FapiError(400, -1125, UNKNOWN)
    await service.key_closed(found)
    return {}
