"""The Binance-compatible stream service of one process: connections, user data, market data.

User data comes from the native fan-out's batches (ws/portfolio.py), so it reaches every process
in commit order with or without Redis. Account-config updates and listenKey closes go through a
small Redis channel of their own (in process without Redis). Market streams are computed here
from this process's feed, like the native market channels.
"""

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError
from sqlalchemy import select

from papertrade.context import AppContext
from papertrade.fapi.stream import market as mk
from papertrade.fapi.stream.keys import ListenKey, ListenKeys
from papertrade.fapi.stream.user import UserEvents, Wire, config_update, expired
from papertrade.kit.deployment import namespace
from papertrade.kit.tasks import cancel_redis_listeners, cancel_requested, next_message
from papertrade.models import CompatKey, Portfolio
from papertrade.trading.values import Quote
from papertrade.ws.client import Client
from papertrade.ws.frames import dumps
from papertrade.ws.hub import Hub
from papertrade.ws.service import Realtime

log = logging.getLogger("papertrade.fapi.stream")
PING_FRAME = b"\x89\x00"  # an unmasked, empty ping (RFC 6455 §5.5.2)


@dataclass(eq=False)
class Conn:
    """One Binance-style socket: its mode, market streams and user-data subscriptions."""

    client: Client
    combined: bool
    private: bool = False  # opened on /private: ends with its last listenKey
    streams: dict[str, str] = field(default_factory=dict)  # canonical name → name as sent
    users: dict[str, tuple[ListenKey, frozenset[str] | None]] = field(default_factory=dict)

    def topic(self, name: str) -> str:
        return ("c:" if self.combined else "r:") + name


class BinanceStreams:
    def __init__(self, ctx: AppContext, realtime: Realtime):
        settings = ctx.settings
        self.ctx = ctx
        self.realtime = realtime
        self.hub = Hub(flush_ms=settings.ws_flush_ms, max_buffer=settings.ws_max_buffer_bytes)
        self.keys = ListenKeys(
            ctx.redis, settings.database_url, int(settings.fapi_listen_key_ttl_s * 1000)
        )
        self.events = UserEvents()
        self.conns: set[Conn] = set()
        self.users: dict[int, set[tuple[Conn, str]]] = {}
        self.streams: dict[str, mk.Stream] = {}  # every subscribed market stream, by name
        self.depth = mk.DepthChain()
        self.channel = f"pt:{namespace(settings.database_url)}:fapi:ws"
        self._pubsub: PubSub | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closing: set[asyncio.Task[None]] = set()

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        self.realtime.portfolio.listeners.append(self)
        if self.ctx.market is not None:
            self.ctx.market.on_tick(self.on_tick)
        s = self.ctx.settings
        self._tasks = [
            asyncio.create_task(self._every(s.fapi_ws_market_s, self.poll), name="fapi-ws-market"),
            asyncio.create_task(self._every(s.fapi_ws_check_s, self.check), name="fapi-ws-check"),
            asyncio.create_task(self._every(s.fapi_ws_ping_s, self.ping), name="fapi-ws-ping"),
        ]
        if self.ctx.redis is not None:
            self._pubsub = self.ctx.redis.pubsub()
            await self._pubsub.subscribe(self.channel)
            self._tasks.append(asyncio.create_task(self._listen(), name="fapi-ws-relay"))

    async def stop(self) -> None:
        await cancel_redis_listeners(*self._tasks)
        self._tasks.clear()
        with contextlib.suppress(ValueError):
            self.realtime.portfolio.listeners.remove(self)
        self.hub.flush_now()
        closes = [c.client.close(1012, "server restarting") for c in list(self.conns)]
        if closes:
            await asyncio.gather(*closes, return_exceptions=True)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()  # type: ignore[no-untyped-call]
            self._pubsub = None

    async def _every(self, seconds: float, job: Any) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await job()
            except Exception as exc:
                if cancel_requested():
                    raise
                log.warning("Binance stream job %s failed: %s", job.__name__, exc)

    # -- connections -----------------------------------------------------------------------------

    def attach(self, conn: Conn) -> None:
        self.conns.add(conn)
        self.hub.attach(conn.client)

    def detach(self, conn: Conn) -> None:
        self.conns.discard(conn)
        for key, (found, _) in list(conn.users.items()):
            self._drop_user(conn, key, found.portfolio_id)
        for name in list(conn.streams):
            self.unsubscribe(conn, name)
        self.hub.detach(conn.client)

    def subscribe(self, conn: Conn, stream: mk.Stream, sent: str) -> None:
        conn.streams[stream.name] = sent
        self.streams[stream.name] = stream
        feed = self.ctx.market
        if stream.kind == "depth" and stream.symbol and feed is not None:
            # Before the SUBSCRIBE is acknowledged: a client's snapshot then sits on the chain.
            quote = feed.quote(stream.symbol)
            instrument = feed.instruments().get(stream.symbol)
            if quote is not None and instrument is not None:
                self.depth.start(quote, instrument)
        self.hub.subscribe(conn.client, conn.topic(stream.name))

    def unsubscribe(self, conn: Conn, name: str) -> None:
        conn.streams.pop(name, None)
        self.hub.unsubscribe(conn.client, conn.topic(name))
        if not self.hub.has("r:" + name) and not self.hub.has("c:" + name):
            stream = self.streams.pop(name, None)
            symbol = stream.symbol if stream is not None and stream.kind == "depth" else None
            if symbol and not any(
                s.kind == "depth" and s.symbol == symbol for s in self.streams.values()
            ):
                self.depth.forget(symbol)

    def set_combined(self, conn: Conn, combined: bool) -> None:
        for name in conn.streams:
            self.hub.unsubscribe(conn.client, conn.topic(name))
        conn.combined = combined
        for name in conn.streams:
            self.hub.subscribe(conn.client, conn.topic(name))

    def add_user(self, conn: Conn, found: ListenKey, events: frozenset[str] | None) -> None:
        conn.users[found.key] = (found, events)
        self.users.setdefault(found.portfolio_id, set()).add((conn, found.key))

    def _drop_user(self, conn: Conn, key: str, portfolio_id: int) -> None:
        conn.users.pop(key, None)
        subs = self.users.get(portfolio_id)
        if subs is not None:
            subs.discard((conn, key))
            if not subs:
                del self.users[portfolio_id]

    def remove_user(self, conn: Conn, key: str) -> None:
        found = conn.users.get(key)
        if found is not None:
            self._drop_user(conn, key, found[0].portfolio_id)

    def send(self, conn: Conn, payload: dict[str, Any] | list[Any], stream: str) -> None:
        body: Any = {"stream": stream, "data": payload} if conn.combined else payload
        self.hub.send(conn.client, dumps(body))

    def close(self, conn: Conn, code: int, reason: str) -> None:
        if conn.client.closing or conn.client.dropped:
            return
        self.hub.flush_now()
        task = asyncio.create_task(conn.client.close(code, reason))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    # -- user data -------------------------------------------------------------------------------

    def watches(self, portfolio_id: int) -> bool:
        return portfolio_id in self.users

    def on_wires(self, wires: list[Wire]) -> None:
        """One commit's batch from the fan-out (every process sees every batch, in order)."""
        if not any(w[1] in self.users for w in wires):
            return
        for portfolio_id, events in self.events.batch(wires).items():
            self._deliver(portfolio_id, events)

    def _deliver(self, portfolio_id: int, events: list[dict[str, Any]]) -> None:
        for conn, key in list(self.users.get(portfolio_id, ())):
            wanted = conn.users.get(key)
            if wanted is None:
                continue
            for event in events:
                if wanted[1] is None or event["e"] in wanted[1]:
                    self.send(conn, event, key)

    async def account_config(self, portfolio_id: int, symbol: str, leverage: int) -> None:
        """ACCOUNT_CONFIG_UPDATE after POST /fapi/v1/leverage, in every process."""
        await self._relay({"p": portfolio_id, "ev": config_update(symbol, leverage)})

    async def key_closed(self, found: ListenKey) -> None:
        """A listenKey was deleted: its streams end in every process."""
        await self._relay({"p": found.portfolio_id, "closed": found.key})

    async def _relay(self, note: dict[str, Any]) -> None:
        if self.ctx.redis is not None:
            try:
                await self.ctx.redis.publish(self.channel, orjson.dumps(note))
                return
            except (RedisError, OSError) as exc:
                log.warning("Binance stream relay unavailable (%s); this process only", exc)
        self._on_note(note)

    def _on_note(self, note: dict[str, Any]) -> None:
        portfolio_id = int(note["p"])
        if "ev" in note:
            self._deliver(portfolio_id, [note["ev"]])
        elif "closed" in note:
            self.expire({note["closed"]})

    async def _listen(self) -> None:
        assert self._pubsub is not None
        while True:
            try:
                message = await next_message(self._pubsub, wait_s=1.0)
            except (RedisError, OSError) as exc:
                if cancel_requested():
                    raise asyncio.CancelledError from exc
                await asyncio.sleep(1.0)
                continue
            if message is not None and message.get("type") == "message":
                try:
                    self._on_note(orjson.loads(message["data"]))
                except (ValueError, KeyError, TypeError):
                    log.exception("malformed note on the Binance stream relay")

    def expire(self, keys: Iterable[str]) -> None:
        """listenKeyExpired on every socket streaming these keys; private sockets left with no
        key are closed."""
        gone = set(keys)
        for conn in list(self.conns):
            for key in [k for k in conn.users if k in gone]:
                self.send(conn, expired(key), key)
                self.remove_user(conn, key)
                if conn.private and not conn.users:
                    self.close(conn, 1000, "listenKey expired")

    async def check(self) -> None:
        """End streams whose listenKey lapsed, whose key pair was revoked or whose portfolio was
        deleted (the key is deleted too)."""
        held = {key: found for c in self.conns for key, (found, _) in c.users.items()}
        if not held:
            return
        alive = await self.keys.alive(list(held))
        dead = set(held) - alive
        key_ids = {f.key_id for k, f in held.items() if k in alive}
        if key_ids:
            async with self.ctx.db.reader() as session:
                rows = await session.execute(
                    select(CompatKey.id)
                    .join(Portfolio, Portfolio.id == CompatKey.portfolio_id)
                    .where(
                        CompatKey.id.in_(key_ids),
                        CompatKey.revoked_at.is_(None),
                        Portfolio.deleted_at.is_(None),
                    )
                )
                valid = {int(r[0]) for r in rows}
            for key, found in held.items():
                if key in alive and found.key_id not in valid:
                    await self.keys.forget(found)
                    dead.add(key)
        if dead:
            self.expire(dead)

    async def ping(self) -> None:
        """Binance pings every 3 minutes (clients answer with a pong)."""
        for conn in list(self.conns):
            proto = conn.client._proto
            if proto is not None and not (proto.close_sent or proto.disconnected):
                proto.transport.write(PING_FRAME)

    # -- market data -----------------------------------------------------------------------------

    def _publish(self, name: str, payload: dict[str, Any] | list[Any]) -> None:
        raw, wrapped = "r:" + name, "c:" + name
        if self.hub.has(raw):
            self.hub.publish(raw, dumps(payload))  # type: ignore[arg-type]
        if self.hub.has(wrapped):
            self.hub.publish(wrapped, dumps({"stream": mk.label(name), "data": payload}))

    async def on_tick(self, quote: Quote) -> None:
        """Real-time streams: book ticker and depth move with every quote."""
        if not self.streams:
            return
        feed = self.ctx.market
        assert feed is not None
        instrument = feed.instruments().get(quote.symbol)
        if instrument is None:
            return
        mine = [
            s
            for s in self.streams.values()
            if s.symbol == quote.symbol or (s.kind == "bookticker" and s.symbol is None)
        ]
        diff: dict[str, Any] | None = None
        depth_done = False
        for stream in mine:
            if stream.kind == "bookticker":
                self._publish(stream.name, mk.book_ticker_payload(quote, instrument))
            elif stream.kind == "depth":
                if not depth_done:
                    diff, depth_done = self.depth.diff(quote, instrument), True
                if diff is not None:
                    self._publish(stream.name, diff)
            elif stream.kind == "depthN" and stream.levels:
                self._publish(
                    stream.name, mk.partial_depth(quote, instrument, stream.levels, quote.time - 1)
                )

    async def poll(self) -> None:
        """Once a period: mark prices, tickers and klines for the subscribed streams."""
        feed = self.ctx.market
        if feed is None or not self.streams:
            return
        instruments = feed.instruments()
        quotes = feed.quotes()
        for stream in list(self.streams.values()):
            try:
                await self._poll_one(feed, stream, instruments, quotes)
            except Exception as exc:  # an upstream hiccup skips one round of one stream
                log.debug("Binance stream %s skipped: %s", stream.name, exc)

    async def _poll_one(self, feed: Any, stream: mk.Stream, instruments: Any, quotes: Any) -> None:
        symbol, kind = stream.symbol, stream.kind
        if kind == "markprice":
            if symbol is None:
                items = [
                    mk.mark_payload(q, instruments[s])
                    for s, q in sorted(quotes.items())
                    if s in instruments
                ]
                self._publish(stream.name, items)
            elif symbol in quotes and symbol in instruments:
                self._publish(stream.name, mk.mark_payload(quotes[symbol], instruments[symbol]))
        elif kind in ("miniticker", "ticker"):
            mini = kind == "miniticker"
            if symbol is None:
                items = [
                    await mk.ticker_payload(feed, s, mini)
                    for s in sorted(quotes)
                    if s in instruments
                ]
                self._publish(stream.name, items)
            elif symbol in instruments:
                self._publish(stream.name, await mk.ticker_payload(feed, symbol, mini))
        elif kind == "kline" and symbol is not None and symbol in instruments and stream.interval:
            payload = await mk.kline_payload(feed, symbol, stream.interval)
            if payload is not None:
                self._publish(stream.name, payload)
        elif kind == "bookticker" and symbol is None:
            pass  # real time, on every tick


async def start(ctx: AppContext, realtime: Realtime) -> BinanceStreams:
    service = BinanceStreams(ctx, realtime)
    await service.start()
    return service
