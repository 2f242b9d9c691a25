"""Answers a request the database failed with 503 (507: storage full) in its surface's shape.

Errors of the database reach no exception handler of the routes (they are not domain errors),
and Starlette's handler of last resort logs a traceback per request and re-raises. Caught here,
an outage costs one warning line (OutageLog), whatever the traffic.
"""

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.fapi.errors import error_response
from papertrade.faults.outage import as_unavailable
from papertrade.kit.responses import native_error
from papertrade.surfaces import is_fapi_path


class DatabaseFaultMiddleware:
    def __init__(self, app: ASGIApp, ctx: AppContext):
        self.app = app
        self.ctx = ctx

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception as exc:
            answer = as_unavailable(exc)
            if answer is None or started:
                raise
            self.ctx.db.outages.failed(exc)
            await render(answer, scope["path"], self.ctx)(scope, receive, send)


def render(exc: PapertradeError, path: str, ctx: AppContext) -> Response:
    if is_fapi_path(path, ctx.settings):
        return error_response(exc)
    retry_after = getattr(exc, "retry_after", None)
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    return native_error(exc.status_code, exc.code, exc.message, headers)
