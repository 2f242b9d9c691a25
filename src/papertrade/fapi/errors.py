"""Binance-shaped errors: {"code": <negative int>, "msg": "..."}."""

from starlette.responses import JSONResponse


def fapi_error(
    status_code: int, code: int, msg: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    """The one compatible error body."""
    return JSONResponse({"code": code, "msg": msg}, status_code=status_code, headers=headers)


HTTP_STATUS_TO_FAPI = {
    400: (-1102, "Mandatory parameter was not sent, was empty/null, or malformed."),
    401: (-2015, "Invalid API-key, IP, or permissions for action."),
    403: (-2015, "Invalid API-key, IP, or permissions for action."),
    404: (-5000, "Path not found."),
    405: (-1014, "Unsupported order combination or method."),
    413: (-1000, "Request body too large."),
    415: (-1000, "Unsupported media type."),
    422: (-1102, "Mandatory parameter was not sent, was empty/null, or malformed."),
    429: (-1003, "Too many requests."),
}


def domain_to_fapi(exc: Exception) -> tuple[int, int, str]:
    """(HTTP status, Binance code, message) for a domain error; the fapi adapter extends this."""
    from papertrade.errors import PapertradeError

    if isinstance(exc, PapertradeError):
        code, _ = HTTP_STATUS_TO_FAPI.get(exc.status_code, (-1000, ""))
        return exc.status_code, code, exc.message
    return 500, -1000, "An unknown error occured while processing the request."
