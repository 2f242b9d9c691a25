"""Binance-shaped errors: {"code": <negative int>, "msg": "..."} with Binance's codes and statuses.

The table of domain errors below is the only place a domain failure becomes a Binance code.
Codes are the contract (client libraries pick exception classes from them); messages follow
Binance's wording, with our detail appended where it helps the user.
"""

from typing import Any

import orjson
from starlette.responses import Response

from papertrade.errors import PapertradeError, RateLimited

UNKNOWN_ERROR = "An unknown error occured while processing the request."
INTERNAL_RETRY = "Internal error; unable to process your request. Please try again."


class FapiJSONResponse(Response):
    """JSON as Binance sends it (`application/json`), rendered with orjson."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def fapi_error(
    status_code: int, code: int, msg: str, headers: dict[str, str] | None = None
) -> Response:
    """The one compatible error body."""
    return FapiJSONResponse({"code": code, "msg": msg}, status_code=status_code, headers=headers)


class FapiError(PapertradeError):
    """A failure of the compatible surface that already carries its Binance code."""

    def __init__(
        self, status_code: int, fapi_code: int, msg: str, headers: dict[str, str] | None = None
    ):
        super().__init__(msg, code="fapi_error", status_code=status_code)
        self.fapi_code = fapi_code
        self.headers = headers or {}


def mandatory(name: str) -> FapiError:
    return FapiError(
        400, -1102, f"Mandatory parameter '{name}' was not sent, was empty/null, or malformed."
    )


def illegal(name: str, legal: str) -> FapiError:
    return FapiError(
        400,
        -1100,
        f"Illegal characters found in parameter '{name}'; legal range is '{legal}'.",
    )


def invalid_data(name: str, detail: str = "") -> FapiError:
    suffix = f" {detail}" if detail else ""
    return FapiError(400, -1130, f"Data sent for parameter '{name}' is not valid.{suffix}")


def not_required(name: str) -> FapiError:
    return FapiError(400, -1106, f"Parameter '{name}' sent when not required.")


def unsupported(what: str) -> FapiError:
    return FapiError(400, -1020, f"This operation is not supported. {what}")


HTTP_STATUS_TO_FAPI = {
    400: (-1102, "Mandatory parameter was not sent, was empty/null, or malformed."),
    401: (-2015, "Invalid API-key, IP, or permissions for action."),
    403: (-2015, "Invalid API-key, IP, or permissions for action."),
    404: (-5000, "Path not found."),
    405: (-5000, "Method is invalid for this path."),
    409: (-1000, UNKNOWN_ERROR),
    413: (-1101, "Request is too large."),
    415: (-1100, "Unsupported media type."),
    422: (-1102, "Mandatory parameter was not sent, was empty/null, or malformed."),
    429: (-1003, "Too many requests."),
    500: (-1000, UNKNOWN_ERROR),
    503: (-1001, INTERNAL_RETRY),
}

# Trading-rule codes of the kernel (papertrade.trading.errors) → (Binance code, Binance message).
TRADING_RULES: dict[str, tuple[int, str]] = {
    "insufficient_margin": (-2019, "Margin is insufficient."),
    "reduce_only_rejected": (-2022, "ReduceOnly Order is rejected."),
    "price_off_tick": (-4014, "Price not increased by tick size."),
    "qty_off_step": (-4023, "Quantity not increased by step size."),
    "qty_too_small": (-4004, "Quantity less than min quantity."),
    "qty_too_large": (-4005, "Quantity greater than max quantity."),
    "price_too_low": (-4013, "Price less than min price."),
    "price_too_high": (-4002, "Price greater than max price."),
    "notional_too_small": (
        -4164,
        "Order's notional must be no smaller than the symbol's minimum (unless you choose "
        "reduce only).",
    ),
    "invalid_leverage": (-4028, "Leverage is not valid."),
    "post_only_would_take": (
        -5022,
        "Due to the order could not be executed as maker, the Post Only order will be rejected.",
    ),
    "fok_not_fillable": (
        -5021,
        "Due to the order could not be filled immediately, the FOK order has been rejected.",
    ),
    "invalid_quantity": (-4003, "Quantity less than or equal to zero."),
    "invalid_price": (-4001, "Price less than or equal to zero."),
    "max_position_exceeded": (
        -2027,
        "Exceeded the maximum allowable position at current leverage.",
    ),
    "would_trigger_immediately": (-2021, "Order would immediately trigger."),
    "invalid_conditional": (-1102, "A parameter was not sent, was empty/null, or malformed."),
    "margin_type_unchanged": (-4046, "No need to change margin type."),
    "margin_type_open_orders": (
        -4047,
        "Margin type cannot be changed if there exists open orders.",
    ),
    "margin_type_position": (-4048, "Margin type cannot be changed if there exists position."),
    "not_isolated": (-4049, "Add margin only support for isolated position."),
    "cross_balance_insufficient": (-4050, "Cross balance insufficient."),
    "isolated_balance_insufficient": (-4051, "Isolated balance insufficient."),
    "isolated_leverage_reduction": (
        -4161,
        "Leverage reduction is not supported in Isolated Margin Mode with open positions.",
    ),
    "position_mode_unchanged": (-4059, "No need to change position side."),
    "position_mode_open_orders": (
        -4067,
        "Position side cannot be changed if there exists open orders.",
    ),
    "position_mode_position": (-4068, "Position side cannot be changed if there exists position."),
    "position_side_mismatch": (-4061, "Order's position side does not match user's setting."),
    "reduce_only_in_hedge_mode": (-1106, "Parameter 'reduceOnly' sent when not required."),
}

# Domain error codes (PapertradeError.code) → (HTTP status, Binance code, Binance message).
DOMAIN_ERRORS: dict[str, tuple[int, int, str]] = {
    "order_not_found": (400, -2013, "Order does not exist."),
    "order_not_open": (400, -2011, "Unknown order sent."),
    "duplicate_client_order_id": (400, -4116, "ClientOrderId is duplicated."),
    "invalid_symbol": (400, -1121, "Invalid symbol."),
    "market_data_stale": (503, -1001, INTERNAL_RETRY),
    "market_unavailable": (503, -1001, INTERNAL_RETRY),
    "portfolio_not_found": (401, -2015, "Invalid API-key, IP, or permissions for action."),
    "rate_limited": (429, -1003, "Too many requests."),
    "conditional_not_found": (400, -2013, "Order does not exist."),
    "conditional_not_open": (400, -2011, "Unknown order sent."),
    "duplicate_client_algo_id": (400, -4116, "ClientOrderId is duplicated."),
    "service_unavailable": (503, -1001, INTERNAL_RETRY),
    "storage_full": (503, -1001, INTERNAL_RETRY),
    "tier_limit": (400, -2010, "New order rejected."),  # a read-only portfolio (docs/tiers.md)
}
# Binance's answer when an order's fate is unknown; ccxt raises RequestTimeout (a NetworkError).
OUTCOME_UNKNOWN = (
    503,
    -1007,
    "Timeout waiting for response from backend server. Send status unknown; "
    "execution status unknown.",
)


def _with_detail(msg: str, detail: str) -> str:
    detail = detail.strip()
    if not detail or detail == msg:
        return msg
    return f"{msg} ({detail.rstrip('.')})"


def domain_to_fapi(exc: Exception) -> tuple[int, int, str]:
    """(HTTP status, Binance code, message) for any error reaching the compatible surface."""
    from papertrade.trading.errors import TradingRuleError

    if isinstance(exc, FapiError):
        return exc.status_code, exc.fapi_code, exc.message
    if isinstance(exc, TradingRuleError):
        code, msg = TRADING_RULES.get(exc.code, (-1000, UNKNOWN_ERROR))
        return 400, code, _with_detail(msg, exc.message)
    if isinstance(exc, RateLimited):
        return 429, -1003, exc.message
    if getattr(exc, "outcome_known", True) is False:  # faults.outage.CommitOutcomeUnknown
        status, code, msg = OUTCOME_UNKNOWN
        return status, code, _with_detail(msg, str(exc))
    if isinstance(exc, PapertradeError):
        known = DOMAIN_ERRORS.get(exc.code)
        if known is not None:
            status, code, msg = known
            return status, code, _with_detail(msg, exc.message)
        code, _ = HTTP_STATUS_TO_FAPI.get(exc.status_code, (-1000, ""))
        return exc.status_code, code, exc.message
    return 500, -1000, UNKNOWN_ERROR


def error_response(exc: Exception) -> Response:
    """Render any exception in the compatible shape (with Retry-After when rate limited)."""
    status, code, msg = domain_to_fapi(exc)
    headers: dict[str, str] = {}
    if isinstance(exc, FapiError):
        headers.update(exc.headers)
    retry_after = getattr(exc, "retry_after", None)  # rate limits, outages
    if retry_after:
        headers["Retry-After"] = str(retry_after)
    return fapi_error(status, code, msg, headers or None)
