"""Real Binance client libraries pointed at the live test server (contract §2)."""

from typing import Any

import ccxt.async_support as ccxt_async

CCXT_URL_KEYS = {
    "fapiPublic": "v1",
    "fapiPublicV2": "v2",
    "fapiPublicV3": "v3",
    "fapiPrivate": "v1",
    "fapiPrivateV2": "v2",
    "fapiPrivateV3": "v3",
}


def ccxt_config(base: str, api_key: str, api_secret: str, **options: Any) -> dict[str, Any]:
    """The documented ccxt configuration: every fapi URL overridden, no currency loading."""
    return {
        "apiKey": api_key,
        "secret": api_secret,
        "urls": {"api": {name: f"{base}/fapi/{v}" for name, v in CCXT_URL_KEYS.items()}},
        "options": {"fetchCurrencies": False, **options},
    }


def with_linear_errors(exchange: Any) -> Any:
    """The documented workaround: map futures error codes as on Binance's own host (§6)."""
    exact = exchange.exceptions["exact"]
    exchange.exceptions["exact"] = {**exact, **exchange.exceptions["linear"]["exact"]}
    return exchange


def ccxt_usdm(base: str, api_key: str, api_secret: str, **options: Any) -> Any:
    return ccxt_async.binanceusdm(ccxt_config(base, api_key, api_secret, **options))
