"""TronGrid's TRC20 transfers API (B6): USDT transfers to one address, page by page."""

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

log = logging.getLogger("papertrade.recharge")

USDT_CONTRACT = "TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t"
PAGE_SIZE = 200
MAX_PAGES = 50  # 10,000 transfers a run; the next run goes on from the oldest pending order
TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Transfer:
    tx_id: str
    from_address: str
    to_address: str
    value: int  # micro-USDT
    block_timestamp: int  # ms


def parse(item: Any, address: str) -> Transfer | None:
    """A USDT transfer to `address`, or None for anything else (another token, an approval,
    an outgoing transfer, a malformed item)."""
    if not isinstance(item, dict):
        return None
    token = item.get("token_info")
    value, tx_id, stamp = item.get("value"), item.get("transaction_id"), item.get("block_timestamp")
    if (
        item.get("type") != "Transfer"
        or not isinstance(token, dict)
        or token.get("address") != USDT_CONTRACT
        or item.get("to") != address
        or not isinstance(tx_id, str)
        or not 0 < len(tx_id) <= 80
        or not isinstance(value, str)
        or not value.isascii()
        or not value.isdigit()
        or len(value) > 18
        or not isinstance(stamp, int)
    ):
        return None
    return Transfer(tx_id, str(item.get("from", ""))[:64], address, int(value), stamp)


async def incoming(
    client: httpx.AsyncClient, base_url: str, address: str, *, since_ms: int, api_key: str | None
) -> AsyncIterator[Transfer]:
    """Confirmed USDT transfers to `address` since `since_ms`, oldest first."""
    params: dict[str, str | int] = {
        "only_to": "true",
        "only_confirmed": "true",
        "contract_address": USDT_CONTRACT,
        "min_timestamp": since_ms,
        "limit": PAGE_SIZE,
        "order_by": "block_timestamp,asc",
    }
    headers = {"TRON-PRO-API-KEY": api_key} if api_key else {}
    url = f"{base_url.rstrip('/')}/v1/accounts/{address}/transactions/trc20"
    for _ in range(MAX_PAGES):
        response = await client.get(url, params=params, headers=headers, timeout=TIMEOUT_S)
        response.raise_for_status()
        body = response.json()
        if not isinstance(body, dict) or body.get("success") is not True:
            raise RuntimeError(f"TronGrid answered without success: {str(body)[:200]}")
        for item in body.get("data") or []:
            transfer = parse(item, address)
            if transfer is not None:
                yield transfer
        meta = body.get("meta")
        fingerprint = meta.get("fingerprint") if isinstance(meta, dict) else None
        if not fingerprint:
            return
        params["fingerprint"] = str(fingerprint)  # the other filters stay as they were
    log.warning("TronGrid: stopped after %d pages for %s", MAX_PAGES, address)
