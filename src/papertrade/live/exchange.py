"""The exchange, through ccxt (Binance USD-M futures first). Its raw Binance endpoints are used
(signing, retries of the transport and error mapping stay ccxt's) so that each call is exactly
one documented request: a new order carries our client order id, and an order we are not sure
about is looked up by it.

`LIVE_EXCHANGE_URL` (operator setting) points every futures URL at another Binance-compatible
host: a testnet, or in tests a second Papertrade's /fapi.
"""

import asyncio
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from decimal import Decimal
from types import ModuleType
from typing import Any

import aiohttp

SUPPORTED = ("binanceusdm",)
TIMEOUT_MS = 5000
_URL_KEYS = {
    "fapiPublic": "v1",
    "fapiPublicV2": "v2",
    "fapiPublicV3": "v3",
    "fapiPrivate": "v1",
    "fapiPrivateV2": "v2",
    "fapiPrivateV3": "v3",
}


def _ccxt() -> ModuleType:
    """ccxt's asyncio half, imported on first use: the package imports every exchange it knows
    (over a second of CPU at each process start), and most processes never reach an exchange."""
    import ccxt.async_support as module

    loaded: ModuleType = module
    return loaded


def __getattr__(name: str) -> type[Exception]:
    """`ExchangeError` (anything the exchange or the way to it answered) and
    `AuthenticationError`, for `except` clauses elsewhere, without importing ccxt before then."""
    errors = {"ExchangeError": "BaseError", "AuthenticationError": "AuthenticationError"}
    if name not in errors:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    error: type[Exception] = getattr(_ccxt(), errors[name])
    return error


def uncertain(error: BaseException) -> bool:
    """May this failed request have reached the exchange? Timeouts, dropped connections, HTTP
    5xx (Binance's "execution status unknown"): look the order up, never re-send it blind.
    ccxt maps a connection cut in the middle of the answer (aiohttp's ClientPayloadError) to a
    plain ExchangeError, so the transport cause is checked too: that order may well be in."""
    if isinstance(error, _ccxt().OperationFailed):
        return True
    return isinstance(error, _ccxt().BaseError) and isinstance(error.__cause__, aiohttp.ClientError)


def transient(error: BaseException) -> bool:
    """Is this a failure of the way to the exchange (a timeout, a refused or cut connection,
    the exchange busy), which a read may simply try again, rather than an answer (a bad key)?"""
    return isinstance(error, _ccxt().NetworkError)


def duplicate(error: BaseException) -> bool:
    """Did the exchange refuse a new order because our client order id is taken (Binance
    -4116)? Then the order is there already: another attempt placed it."""
    return isinstance(error, _ccxt().BaseError) and '"code":-4116' in str(error).replace(" ", "")


@dataclass(frozen=True, slots=True)
class KeyCheck:
    can_trade: bool
    withdrawals: str  # disabled | enabled | not_reported
    equity: Decimal


def client(
    api_key: str, api_secret: str, base_url: str | None, timeout_ms: int = TIMEOUT_MS
) -> Any:
    config: dict[str, Any] = {
        "apiKey": api_key,
        "secret": api_secret,
        "timeout": timeout_ms,
        # ccxt's own limiter spaces requests by their weight (openOrders of every symbol: 2 s
        # before the next call), which would hold the kill switch back; our few calls per
        # account stay far inside Binance's per-minute weight.
        "enableRateLimit": False,
        "options": {"fetchCurrencies": False},
    }
    if base_url:
        base = base_url.rstrip("/")
        urls = {name: f"{base}/fapi/{v}" for name, v in _URL_KEYS.items()}
        # The account endpoints too (API restrictions): never Binance's while testing elsewhere.
        urls["sapi"] = f"{base}/sapi/v1"
        config["urls"] = {"api": urls}
    return _ccxt().binanceusdm(config)


@asynccontextmanager
async def connected(
    api_key: str, api_secret: str, base_url: str | None, timeout_ms: int = TIMEOUT_MS
) -> AsyncIterator[Any]:
    exchange = client(api_key, api_secret, base_url, timeout_ms)
    try:
        yield exchange
    finally:
        await exchange.close()


async def check_key(exchange: Any) -> KeyCheck:
    """Does the key work and may it trade futures; does the exchange say it can withdraw?"""
    account = await exchange.fapiPrivateV2GetAccount()
    can_trade = bool(account.get("canTrade", False))
    try:
        restrictions = await exchange.sapiGetAccountApiRestrictions()
        withdrawals = "enabled" if restrictions.get("enableWithdrawals") else "disabled"
    except _ccxt().BaseError:
        withdrawals = "not_reported"  # the host has no /sapi (a testnet, a compatible host)
    return KeyCheck(can_trade, withdrawals, Decimal(str(account.get("totalMarginBalance", "0"))))


async def equity(exchange: Any) -> Decimal:
    account = await exchange.fapiPrivateV2GetAccount()
    return Decimal(str(account["totalMarginBalance"]))


async def position_amount(exchange: Any, symbol: str) -> Decimal:
    rows = await exchange.fapiPrivateV2GetPositionRisk({"symbol": symbol})
    return sum((Decimal(str(r["positionAmt"])) for r in rows), Decimal(0))


async def positions(exchange: Any) -> dict[str, Decimal]:
    """Every non-zero position, signed (one-way mode: one row per symbol)."""
    held: dict[str, Decimal] = {}
    for row in await exchange.fapiPrivateV2GetPositionRisk():
        amount = Decimal(str(row["positionAmt"]))
        if amount != 0:
            held[str(row["symbol"])] = held.get(str(row["symbol"]), Decimal(0)) + amount
    return held


async def open_orders(exchange: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = await exchange.fapiPrivateGetOpenOrders()
    return rows


async def place_market(
    exchange: Any,
    symbol: str,
    side: str,
    quantity: Decimal,
    client_order_id: str,
    *,
    reduce_only: bool = False,
) -> dict[str, Any]:
    params = {
        "symbol": symbol,
        "side": side.upper(),
        "type": "MARKET",
        "quantity": format(quantity, "f"),
        "newClientOrderId": client_order_id,
    }
    if reduce_only:
        params["reduceOnly"] = "true"
    answer: dict[str, Any] = await exchange.fapiPrivatePostOrder(params)
    return answer


async def find_order(exchange: Any, symbol: str, client_order_id: str) -> dict[str, Any] | None:
    try:
        answer: dict[str, Any] = await exchange.fapiPrivateGetOrder(
            {"symbol": symbol, "origClientOrderId": client_order_id}
        )
    except _ccxt().OrderNotFound:
        return None
    return answer


async def cancel_everything(exchange: Any) -> list[str]:
    """Cancel every open order, every symbol at once; the symbols that had some."""
    open_orders = await exchange.fapiPrivateGetOpenOrders()
    symbols = sorted({o["symbol"] for o in open_orders})
    await asyncio.gather(
        *(exchange.fapiPrivateDeleteAllOpenOrders({"symbol": symbol}) for symbol in symbols)
    )
    return symbols


async def close_everything(exchange: Any, tag: str) -> list[str]:
    """Close every position at market (reduce-only); the symbols closed."""
    closed = []
    for row in await exchange.fapiPrivateV2GetPositionRisk():
        amount = Decimal(str(row["positionAmt"]))
        if amount == 0:
            continue
        side = "SELL" if amount > 0 else "BUY"
        await place_market(
            exchange,
            row["symbol"],
            side,
            abs(amount),
            f"{tag}-{row['symbol']}"[:36],
            reduce_only=True,
        )
        closed.append(str(row["symbol"]))
    return closed


# What an exchange's error may carry that must never reach a page or a log a user reads: the
# signed request (its URL with the query: timestamp, recvWindow, signature) and the key.
_URL = re.compile(r"\b(?:https?|wss?)://\S+", re.IGNORECASE)
_SIGNED = re.compile(
    r"\b(?:signature|timestamp|recvWindow|apiKey|X-MBX-APIKEY)\s*[=:]\s*[^\s&,;\"']*",
    re.IGNORECASE,
)
_SAID = re.compile(r'"msg"\s*:\s*"((?:[^"\\]|\\.)*)"')
_CODE = re.compile(r'"code"\s*:\s*(-?\d+)')


def redact(text: str) -> str:
    """`text` without any URL or signed-request parameter (and trimmed of what that leaves)."""
    return re.sub(r"\s{2,}", " ", _SIGNED.sub("", _URL.sub("", text))).strip(" ,;:")


def said(error: BaseException) -> str:
    """What the exchange said, in its own words when its answer had them ("Signature for this
    request is not valid. (code -1022)"), else the error without the signed request."""
    text = str(error)
    found = _SAID.search(text)
    if found is None:
        return redact(text).rstrip(".") or type(error).__name__
    code = _CODE.search(text)
    words = redact(found.group(1)).rstrip(".")
    return f"{words} (code {code.group(1)})" if code else words
