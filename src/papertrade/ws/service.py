"""The real-time service of one process: hub, market and portfolio publishers, housekeeping."""

import asyncio
import logging
from collections.abc import Sequence

from starlette.requests import HTTPConnection

from papertrade.context import AppContext
from papertrade.events import DomainEvent
from papertrade.faults.outage import log_failure
from papertrade.kit.tasks import cancel_and_wait
from papertrade.kit.time import now_ms
from papertrade.ws import auth
from papertrade.ws.channels import PORTFOLIO_KINDS
from papertrade.ws.client import Client
from papertrade.ws.frames import dumps
from papertrade.ws.hub import Hub
from papertrade.ws.inbox import InboxRelay
from papertrade.ws.market import MarketPublisher
from papertrade.ws.portfolio import PortfolioFanout
from papertrade.ws.positions import PositionMarks
from papertrade.ws.social import SocialRelay

log = logging.getLogger("papertrade.ws")

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_BAD_REQUEST = 4400
CLOSE_RATE_LIMITED = 4429
CLOSE_RESTART = 1012


def error_message(code: str, msg: str, request_id: object = None) -> bytes:
    body: dict[str, object] = {"type": "error", "error": code, "msg": msg}
    if request_id is not None:
        body["id"] = request_id
    return dumps(body)


class Realtime:
    """Everything behind /v1/ws in this process."""

    def __init__(self, ctx: AppContext):
        settings = ctx.settings
        self.ctx = ctx
        self.hub = Hub(flush_ms=settings.ws_flush_ms, max_buffer=settings.ws_max_buffer_bytes)
        self.portfolio = PortfolioFanout(self.hub, ctx.redis, settings.database_url)
        self.inbox = InboxRelay(self.hub, ctx.redis, settings.database_url)
        self.social = SocialRelay(self.hub, ctx.redis, settings.database_url)
        self.market = MarketPublisher(self.hub, ctx.market) if ctx.market is not None else None
        self.position_marks = PositionMarks(self.hub, ctx)
        self.started_at = now_ms()
        self._running = False
        self._tasks: list[asyncio.Task[None]] = []
        self._closing: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        await self.portfolio.start()
        await self.inbox.start()
        await self.social.start()
        self._running = True
        self.ctx.events.subscribe(self._on_events)
        if self.market is not None:
            self.market.start()
        self.position_marks.start()
        self._tasks = [
            asyncio.create_task(self._heartbeat_forever(), name="ws-heartbeat"),
            asyncio.create_task(self._revalidate_forever(), name="ws-revalidate"),
        ]

    async def stop(self) -> None:
        """Close every socket (1012, service restart) and stop the background tasks."""
        self._running = False
        await cancel_and_wait(*self._tasks)
        self._tasks.clear()
        self.hub.flush_now()
        closes = [c.close(CLOSE_RESTART, "server restarting") for c in list(self.hub.clients)]
        if closes:
            await asyncio.gather(*closes, return_exceptions=True)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        if self.market is not None:
            await self.market.stop()
        await self.position_marks.stop()
        await self.portfolio.stop()
        await self.inbox.stop()
        await self.social.stop()

    async def _on_events(self, events: Sequence[DomainEvent]) -> None:
        if self._running:
            await self.portfolio.on_events(events)
            await self.inbox.on_events(events)
            await self.social.on_events(events)

    def close_client(self, client: Client, close_code: int, code: str, msg: str) -> None:
        """Tell the client why, then close it (in the background, bounded in time)."""
        if client.closing or client.dropped:
            return
        self.hub.send(client, error_message(code, msg))
        self.hub.flush_now()
        task = asyncio.create_task(client.close(close_code, code))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    # -- housekeeping --------------------------------------------------------------------------

    async def _heartbeat_forever(self) -> None:
        while True:
            await asyncio.sleep(self.ctx.settings.ws_heartbeat_s)
            if self.hub.clients:
                message = dumps({"type": "heartbeat", "time": now_ms()})
                self.hub.publish_to(list(self.hub.clients), message)

    async def _revalidate_forever(self) -> None:
        while True:
            await asyncio.sleep(self.ctx.settings.ws_revalidate_s)
            try:
                await self.revalidate()
            except Exception as exc:
                what = "re-checking WebSocket credentials failed"
                log_failure(log, what, exc, self.ctx.db.outages)

    async def revalidate(self) -> None:
        """Close sockets whose credential was revoked; drop channels of deleted portfolios."""
        # The portfolios each client held when asked: one it subscribes to while the database
        # answers is not among the answer, and is checked on the next round, not taken as gone.
        asked = {c: c.portfolio_ids for c in self.hub.clients if c.principal is not None}
        if not asked:
            return
        key_ids, session_ids, portfolio_ids = set(), set(), set()
        for client, held in asked.items():
            principal = client.principal
            assert principal is not None
            if principal.kind == "api_key":
                key_ids.add(principal.credential_id)
            elif principal.kind == "session":
                session_ids.add(principal.credential_id)
            portfolio_ids |= held
        keys, sessions, portfolios = await auth.still_valid(
            self.ctx, key_ids, session_ids, portfolio_ids
        )
        for client, held in asked.items():
            principal = client.principal
            assert principal is not None
            live = keys if principal.kind == "api_key" else sessions
            if principal.credential_id not in live:
                self.close_client(
                    client,
                    CLOSE_UNAUTHENTICATED,
                    "credential_revoked",
                    "The API key or session of this socket was revoked or has expired.",
                )
                continue
            gone = {str(pid) for pid in held - portfolios}
            if gone:
                dropped = sorted(
                    t
                    for t in client.topics
                    if t.partition(":")[0] in PORTFOLIO_KINDS and t.partition(":")[2] in gone
                )
                for topic in dropped:
                    self.hub.unsubscribe(client, topic)
                message = {
                    "type": "unsubscribed",
                    "channels": dropped,
                    "reason": "portfolio_deleted",
                }
                self.hub.send(client, dumps(message))


async def start(ctx: AppContext) -> Realtime:
    """Build and start the process's real-time service (the app lifespan calls this and keeps
    it as app.state.realtime)."""
    realtime = Realtime(ctx)
    await realtime.start()
    return realtime


def get_realtime(conn: HTTPConnection) -> Realtime | None:
    """The running app's real-time service, once it has started."""
    found = getattr(conn.app.state, "realtime", None)
    return found if isinstance(found, Realtime) else None
