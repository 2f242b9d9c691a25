"""The WebSocket endpoint (native router: /v1/ws and its legacy twin); see docs/websocket.md."""

import asyncio
import contextlib

from fastapi import APIRouter
from starlette.websockets import WebSocket

from papertrade.auth.v1 import charge_rate_limit
from papertrade.context import AppContext
from papertrade.errors import PapertradeError
from papertrade.faults.outage import as_unavailable
from papertrade.kit.responses import native_error
from papertrade.ws.auth import principal_from_upgrade
from papertrade.ws.client import Client
from papertrade.ws.service import (
    CLOSE_FORBIDDEN,
    CLOSE_RATE_LIMITED,
    CLOSE_UNAUTHENTICATED,
    Realtime,
    get_realtime,
)
from papertrade.ws.session import Session

router = APIRouter(tags=["websocket"])
CLOSE_TRY_AGAIN_LATER = 1013  # RFC 6455: the service is unavailable for now


async def _deny(websocket: WebSocket, exc: PapertradeError) -> None:
    """Refuse the upgrade with an HTTP status and a native error body when the server can."""
    if "websocket.http.response" in websocket.scope.get("extensions", {}):
        retry_after = getattr(exc, "retry_after", None)  # rate limits, outages
        headers = {"Retry-After": str(retry_after)} if retry_after else None
        await websocket.send_denial_response(
            native_error(exc.status_code, exc.code, exc.message, headers)
        )
        return
    code = {401: CLOSE_UNAUTHENTICATED, 429: CLOSE_RATE_LIMITED, 503: CLOSE_TRY_AGAIN_LATER}.get(
        exc.status_code
    )
    await websocket.close(code=code or CLOSE_FORBIDDEN, reason=exc.code)


@router.websocket("/ws")
async def websocket_endpoint(websocket: WebSocket) -> None:
    """Real-time orders, positions, balance, signals and market data (docs/websocket.md)."""
    ctx: AppContext = websocket.app.state.ctx
    realtime = get_realtime(websocket)
    if realtime is None:
        await websocket.close(code=1013, reason="not ready")
        return
    try:
        principal = await principal_from_upgrade(ctx, websocket)
        if principal is not None:
            await charge_rate_limit(ctx, principal)
    except PapertradeError as exc:
        await _deny(websocket, exc)
        return
    except Exception as exc:
        unavailable = as_unavailable(exc)  # the database is away: 503, not a 500
        if unavailable is None:
            raise
        ctx.db.outages.failed(exc)
        await _deny(websocket, unavailable)
        return
    await websocket.accept()
    client = Client(websocket, max_buffer=ctx.settings.ws_max_buffer_bytes)
    client.principal = principal
    client.handler = asyncio.current_task()
    realtime.hub.attach(client)
    session = Session(realtime, client)
    try:
        session.welcome()
        await _converse(realtime, session, client)
    except asyncio.CancelledError:
        if not client.dropped:
            raise
    finally:
        realtime.hub.detach(client)


async def _converse(realtime: Realtime, session: Session, client: Client) -> None:
    """Read messages until the client goes; an unauthenticated socket has a deadline."""
    loop = asyncio.get_running_loop()
    deadline: float | None = None
    if client.principal is None:
        deadline = loop.time() + realtime.ctx.settings.ws_auth_timeout_s
    while True:
        if deadline is not None and client.principal is not None:
            deadline = None
        try:
            async with asyncio.timeout_at(deadline):
                message = await client.websocket.receive()
        except TimeoutError:
            deadline = None
            realtime.close_client(
                client,
                CLOSE_UNAUTHENTICATED,
                "auth_timeout",
                'No credentials: send {"op": "auth", "key": "<API_KEY>"} first, or '
                "'Authorization: Bearer <API_KEY>' on the upgrade request.",
            )
            continue
        if message["type"] == "websocket.disconnect":
            return
        text = message.get("text")
        if text is None:
            with contextlib.suppress(UnicodeDecodeError):
                text = (message.get("bytes") or b"").decode()
        if text is None:
            session.error("invalid_message", "Send JSON text messages.")
            continue
        await session.handle(text)
