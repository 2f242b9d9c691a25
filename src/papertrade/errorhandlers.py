"""Every error leaves in its surface's shape: {"error","msg"} natively, {"code","msg"} on /fapi."""

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.fapi.errors import HTTP_STATUS_TO_FAPI, domain_to_fapi, fapi_error
from papertrade.kit.responses import native_error
from papertrade.middleware import apply_security_headers
from papertrade.surfaces import is_fapi_path
from papertrade.trading.errors import TradingRuleError

log = logging.getLogger("papertrade.errors")

HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_error",
    429: "rate_limited",
}


def _is_fapi(request: Request) -> bool:
    ctx: AppContext = request.app.state.ctx
    return is_fapi_path(request.url.path, ctx.settings)


def _describe_validation(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:3]:
        location = ".".join(str(p) for p in error.get("loc", ()) if p != "body")
        parts.append(f"{location or 'body'}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "Invalid request."


async def on_domain_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, PapertradeError)
    retry_after = getattr(exc, "retry_after", None)  # rate limits, outages
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    if _is_fapi(request):
        status, code, msg = domain_to_fapi(exc)
        return fapi_error(status, code, msg, headers)
    extra = getattr(exc, "extra", None)
    return native_error(exc.status_code, exc.code, exc.message, headers, extra)


async def on_trading_rule(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, TradingRuleError)
    if _is_fapi(request):
        status, code, msg = domain_to_fapi(exc)
        return fapi_error(status, code, msg)
    return native_error(400, exc.code, _sentence(exc.message))


def _sentence(message: str) -> str:
    return message[:1].upper() + message[1:] + ("" if message.endswith(".") else ".")


async def on_http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, StarletteHTTPException)
    headers = dict(exc.headers) if exc.headers else None
    if _is_fapi(request):
        code, msg = HTTP_STATUS_TO_FAPI.get(exc.status_code, (-1000, "Unknown error."))
        return fapi_error(exc.status_code, code, msg, headers)
    code_name = HTTP_CODES.get(exc.status_code, "error")
    detail = exc.detail if isinstance(exc.detail, str) else code_name
    if exc.status_code == 404:
        detail = f"No such endpoint: {request.method} {request.url.path}"
    elif exc.status_code == 405:
        detail = f"Method {request.method} is not allowed on {request.url.path}"
    return native_error(exc.status_code, code_name, detail, headers)


async def on_validation_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    if _is_fapi(request):
        return fapi_error(400, -1102, _describe_validation(exc))
    return native_error(422, "validation_error", _describe_validation(exc))


async def on_unhandled(request: Request, exc: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    if _is_fapi(request):
        response: Response = fapi_error(
            500, -1000, "An unknown error occured while processing the request."
        )
    else:
        response = native_error(
            500, "internal_error", "Something went wrong on our side; it was logged."
        )
    # Starlette sends this answer from outside every middleware: add their headers here.
    ctx: AppContext = request.app.state.ctx
    apply_security_headers(response.headers, ctx.settings.public_base_url.startswith("https://"))
    return response


def install(app: FastAPI) -> None:
    """Register the handlers on the app."""
    handlers: dict[Any, Any] = {
        PapertradeError: on_domain_error,
        TradingRuleError: on_trading_rule,
        StarletteHTTPException: on_http_error,
        RequestValidationError: on_validation_error,
        Exception: on_unhandled,
    }
    for exc_class, handler in handlers.items():
        app.add_exception_handler(exc_class, handler)
