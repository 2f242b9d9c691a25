"""Refuse a path or query parameter holding NUL before any handler can pass it to a database.

PostgreSQL text cannot hold U+0000 (SQLite can), so `?symbol=BTC%00` used to reach a query and
fail there as a 500 with a traceback. A NUL is never meaningful in a path or a parameter: it is
a client mistake, answered in the surface's shape. Bodies are checked by the request models
(kit/schemas.py StrictInput) and by the /fapi parameter parser.
"""

from urllib.parse import parse_qsl

from starlette.types import ASGIApp, Receive, Scope, Send

from papertrade.config import Settings
from papertrade.fapi.errors import fapi_error
from papertrade.kit.responses import native_error
from papertrade.kit.schemas import unstorable
from papertrade.surfaces import is_fapi_path


def _where(scope: Scope) -> str | None:
    """The first part of the request that holds NUL ("path" or a parameter name), or None."""
    if "\x00" in scope["path"]:
        return "path"
    query: bytes = scope.get("query_string", b"")
    if b"%00" not in query:  # the only way NUL can be in a query string
        return None
    for name, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if "\x00" in name or "\x00" in value:
            return name.replace("\x00", "?")[:40]
    return None  # pragma: no cover - %00 always decodes to NUL in a name or a value


class NulGuardMiddleware:
    """Answers 422 validation_error (/v1, pages, webhooks) or -1100 (/fapi) to NUL in the URL."""

    def __init__(self, app: ASGIApp, settings: Settings):
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        where = _where(scope) if scope["type"] == "http" else None
        if where is None:
            await self.app(scope, receive, send)
            return
        problem = unstorable("\x00")
        if is_fapi_path(scope["path"], self.settings):
            response = fapi_error(400, -1100, f"Illegal characters found in parameter '{where}'.")
        else:
            response = native_error(422, "validation_error", f"{where}: {problem}")
        await response(scope, receive, send)
