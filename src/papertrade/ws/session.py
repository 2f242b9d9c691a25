"""What one client may say: auth, subscribe, unsubscribe, ping (docs/websocket.md)."""

import time
from typing import Any

import orjson

from papertrade.auth.v1 import charge_rate_limit
from papertrade.errors import NotFound, PapertradeError, RateLimited
from papertrade.kit.ids import is_id
from papertrade.kit.time import now_ms
from papertrade.portfolios import service as portfolio_service
from papertrade.ws import auth
from papertrade.ws.channels import USER_KINDS, Channel, ChannelError, parse
from papertrade.ws.client import Client
from papertrade.ws.frames import dumps
from papertrade.ws.service import (
    CLOSE_RATE_LIMITED,
    CLOSE_UNAUTHENTICATED,
    Realtime,
    error_message,
)

MAX_MESSAGE_BYTES = 4096
MAX_CHANNELS_PER_MESSAGE = 100
MAX_MESSAGES_PER_SECOND = 50


class Session:
    """The conversation with one connected client."""

    def __init__(self, realtime: Realtime, client: Client):
        self.realtime = realtime
        self.ctx = realtime.ctx
        self.hub = realtime.hub
        self.client = client
        self._window = 0
        self._count = 0

    def reply(self, body: dict[str, Any], request_id: object = None) -> None:
        if request_id is not None:
            body["id"] = request_id
        self.hub.send(self.client, dumps(body))

    def error(self, code: str, msg: str, request_id: object = None) -> None:
        self.hub.send(self.client, error_message(code, msg, request_id))

    def welcome(self) -> None:
        principal = self.client.principal
        self.reply(
            {
                "type": "welcome",
                "time": now_ms(),
                "authenticated": principal is not None,
                "user_id": principal.user_id if principal else None,
                "heartbeat_s": self.ctx.settings.ws_heartbeat_s,
                "started_at": self.realtime.started_at,
            }
        )

    def _over_rate(self) -> bool:
        window = int(time.monotonic())
        if window != self._window:
            self._window, self._count = window, 0
        self._count += 1
        return self._count > MAX_MESSAGES_PER_SECOND

    async def handle(self, text: str) -> None:
        """Act on one message from the client."""
        if self._over_rate():
            self.realtime.close_client(
                self.client,
                CLOSE_RATE_LIMITED,
                "rate_limited",
                f"More than {MAX_MESSAGES_PER_SECOND} messages per second.",
            )
            return
        if len(text) > MAX_MESSAGE_BYTES:
            self.error("message_too_large", f"Messages are limited to {MAX_MESSAGE_BYTES} bytes.")
            return
        try:
            message = orjson.loads(text)
        except orjson.JSONDecodeError:
            self.error("invalid_json", 'Send JSON objects such as {"op": "ping"}.')
            return
        if not isinstance(message, dict):
            self.error("invalid_message", 'Send JSON objects such as {"op": "ping"}.')
            return
        op, request_id = message.get("op"), message.get("id")
        if op == "ping":
            self.reply({"type": "pong", "time": now_ms()}, request_id)
        elif op == "auth":
            await self._auth(message, request_id)
        elif self.client.principal is None:
            self.error(
                "unauthenticated",
                'Authenticate first: {"op": "auth", "key": "<API_KEY>"} (or send the key as '
                "'Authorization: Bearer' on the upgrade request).",
                request_id,
            )
        elif op == "subscribe":
            await self._subscribe(message, request_id)
        elif op == "unsubscribe":
            self._unsubscribe(message, request_id)
        else:
            self.error(
                "unknown_op",
                f"Unknown op {op!r}: use auth, subscribe, unsubscribe or ping.",
                request_id,
            )

    async def _auth(self, message: dict[str, Any], request_id: object) -> None:
        if self.client.principal is not None:
            self.error("already_authenticated", "This socket is already authenticated.", request_id)
            return
        key = message.get("key")
        try:
            if not isinstance(key, str):
                raise PapertradeError("Send the API key as a string.", code="invalid_api_key")
            principal = await auth.principal_from_key(self.ctx, key)
            await charge_rate_limit(self.ctx, principal)
        except RateLimited as exc:
            self.realtime.close_client(self.client, CLOSE_RATE_LIMITED, exc.code, exc.message)
            return
        except PapertradeError as exc:
            # No second try on the same socket: a key guesser reconnects, and is rate-limited.
            self.realtime.close_client(self.client, CLOSE_UNAUTHENTICATED, exc.code, exc.message)
            return
        self.client.principal = principal
        self.reply({"type": "authenticated", "user_id": principal.user_id}, request_id)

    def _channels_of(self, message: dict[str, Any]) -> list[object]:
        channels = message.get("channels", message.get("channel"))
        if isinstance(channels, str):
            channels = [channels]
        if not isinstance(channels, list) or not channels:
            raise ChannelError(
                "invalid_message",
                'Name channels as a list: {"op": "subscribe", "channels": [...]}.',
            )
        if len(channels) > MAX_CHANNELS_PER_MESSAGE:
            raise ChannelError(
                "too_many_channels", f"At most {MAX_CHANNELS_PER_MESSAGE} channels per message."
            )
        return channels

    async def _resolve(self, names: list[object]) -> list[str]:
        """Canonical topic names the caller may read; raises ChannelError or NotFound."""
        principal = self.client.principal
        assert principal is not None
        parsed: list[Channel] = []
        for name in names:
            parsed.extend(parse(name))
        topics: list[str] = []
        instruments = self.ctx.market.instruments() if self.ctx.market is not None else {}
        async with self.ctx.db.reader() as session:
            mine: list[int] | None = None
            for channel in parsed:
                if channel.kind in USER_KINDS:
                    topics.append(f"{channel.kind}:{principal.user_id}")
                    continue
                if channel.symbol is not None and channel.symbol not in instruments:
                    raise ChannelError(
                        "invalid_symbol",
                        f"Unknown symbol {channel.symbol[:30]!r}; see GET /v1/market/symbols.",
                    )
                if channel.is_portfolio and channel.portfolio_id is None:
                    if mine is None:
                        portfolios = await portfolio_service.list_mine(session, principal.user_id)
                        mine = [p.id for p in portfolios]
                    topics.extend(f"{channel.kind}:{pid}" for pid in mine)
                    continue
                if channel.is_portfolio:
                    assert channel.portfolio_id is not None
                    if not is_id(channel.portfolio_id):  # no row can have it: never queried
                        raise NotFound("Portfolio not found.", code="portfolio_not_found")
                    await portfolio_service.get_owned(session, principal, channel.portfolio_id)
                topics.append(channel.name)
        return list(dict.fromkeys(topics))

    async def _subscribe(self, message: dict[str, Any], request_id: object) -> None:
        try:
            topics = await self._resolve(self._channels_of(message))
        except ChannelError as exc:
            self.error(exc.code, exc.message, request_id)
            return
        except NotFound as exc:
            self.error(exc.code, f"{exc.message} You can only subscribe to your own.", request_id)
            return
        limit = self.ctx.settings.ws_max_subscriptions
        if len(self.client.topics | set(topics)) > limit:
            self.error(
                "too_many_subscriptions", f"A socket holds at most {limit} channels.", request_id
            )
            return
        if self.client.closing or self.client.dropped:
            return
        for topic in topics:
            self.hub.subscribe(self.client, topic)
        self.reply({"type": "subscribed", "channels": topics}, request_id)

    def _unsubscribe(self, message: dict[str, Any], request_id: object) -> None:
        try:
            names = self._channels_of(message)
            topics = [c.name for name in names for c in parse(name)]
        except ChannelError as exc:
            self.error(exc.code, exc.message, request_id)
            return
        if self.client.principal is not None:
            user_id = self.client.principal.user_id
            topics += [f"{kind}:{user_id}" for kind in USER_KINDS if kind in topics]
        if any(t in {"orders", "positions", "balance", "signals"} for t in topics):
            kinds = {t for t in topics if ":" not in t}
            topics = [t for t in topics if ":" in t]
            topics += [t for t in self.client.topics if t.partition(":")[0] in kinds]
        removed = [t for t in dict.fromkeys(topics) if t in self.client.topics]
        for topic in removed:
            self.hub.unsubscribe(self.client, topic)
        self.reply({"type": "unsubscribed", "channels": removed}, request_id)
