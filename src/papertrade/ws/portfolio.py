"""Portfolio events to sockets: sequence numbers, and fan-out across processes through Redis.

Every event of a portfolio gets two counters: `seq` (all the portfolio's events) and
`channel_seq` (that portfolio's events on one channel). A client that sees a counter jump by
more than one missed a message and re-reads the resource over REST.

Without Redis the counters live in this process and events go straight to local sockets. With
Redis, the process that committed the events runs one Lua script that increments the counters and
publishes the batch, so numbering and delivery order agree in every process; each process (this
one included) delivers what it hears on the channel to the sockets it holds.
"""

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any, Protocol

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from papertrade.events import DomainEvent, PortfolioEvent
from papertrade.kit.deployment import namespace
from papertrade.kit.tasks import cancel_redis_listeners, cancel_requested, next_message
from papertrade.ws.channels import channel_for_event
from papertrade.ws.frames import dumps, native_data
from papertrade.ws.hub import Hub

log = logging.getLogger("papertrade.ws")

# (channel kind, portfolio id, event type, time ms, data in the native convention)
Wire = tuple[str, int, str, int, dict[str, Any]]

SEQ_TTL_S = 30 * 86_400
QUEUE_LIMIT = 10_000
_PUBLISH = """
local marks = {}
for i = 1, #KEYS, 2 do
  local s = redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ARGV[2])
  local c = redis.call('INCR', KEYS[i + 1])
  redis.call('EXPIRE', KEYS[i + 1], ARGV[2])
  marks[#marks + 1] = s .. ':' .. c
end
redis.call('PUBLISH', ARGV[1], table.concat(marks, ',') .. '\\n' .. ARGV[3])
return #marks
"""


class WireListener(Protocol):
    """Hears each commit's batch as every process receives it (the Binance user data stream)."""

    def watches(self, portfolio_id: int) -> bool:
        """Whether a socket of this process follows the portfolio."""
        ...

    def on_wires(self, wires: list[Wire]) -> None: ...


def to_wire(event: DomainEvent) -> Wire | None:
    if not isinstance(event, PortfolioEvent):
        return None
    channel = channel_for_event(event.type)
    if channel is None:
        return None
    return (channel, event.portfolio_id, event.type, event.time, native_data(event.data))


def render(wire: Wire, seq: int, channel_seq: int) -> bytes:
    channel, portfolio_id, kind, time, data = wire
    return dumps(
        {
            "channel": f"{channel}:{portfolio_id}",
            "type": kind,
            "portfolio_id": portfolio_id,
            "seq": seq,
            "channel_seq": channel_seq,
            "time": time,
            "data": data,
        }
    )


class PortfolioFanout:
    """Numbers portfolio events and delivers them, in process or through Redis."""

    def __init__(self, hub: Hub, redis: Redis | None, database_url: str):
        self.hub = hub
        self.redis = redis
        prefix = f"pt:{namespace(database_url)}:ws"
        self.channel = f"{prefix}:events"
        self.prefix = prefix
        self._seq: dict[int, int] = {}
        self._channel_seq: dict[tuple[int, str], int] = {}
        self._queue: asyncio.Queue[list[Wire]] = asyncio.Queue(QUEUE_LIMIT)
        self._tasks: list[asyncio.Task[None]] = []
        self._pubsub: PubSub | None = None
        self.ready = asyncio.Event()
        # Told each commit's batch as every process receives it (the Binance user data stream,
        # fapi/stream): in publish order, after the native channels got it.
        self.listeners: list[WireListener] = []

    async def start(self) -> None:
        if self.redis is None:
            self.ready.set()
            return
        self._pubsub = await self._subscribe()
        self.ready.set()
        self._tasks = [
            asyncio.create_task(self._listen(), name="ws-redis-listen"),
            asyncio.create_task(self._publish_forever(), name="ws-redis-publish"),
        ]

    async def stop(self) -> None:
        await cancel_redis_listeners(*self._tasks)
        self._tasks.clear()
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()  # type: ignore[no-untyped-call]
            self._pubsub = None

    async def on_events(self, events: Sequence[DomainEvent]) -> None:
        """The EventBus subscriber: runs after each commit, never waits for Redis."""
        if self.redis is None:
            self._on_local_events(events)
            return
        wires = [w for w in map(to_wire, events) if w is not None]
        if not wires:
            return
        try:
            self._queue.put_nowait(wires)
        except asyncio.QueueFull:
            log.error("WebSocket event queue full; %d events not fanned out", len(wires))
            self.resync({w[1] for w in wires}, "events were dropped under load")

    def _on_local_events(self, events: Sequence[DomainEvent]) -> None:
        """Without Redis: number and deliver each event here. The listeners get wires only for
        the portfolios one of them follows in this process: a tick can trigger thousands of
        orders that nobody follows, and converting their events cost a fifth of the tick."""
        followed: dict[int, bool] = {}
        told: list[Wire] = []
        for event in events:
            if not isinstance(event, PortfolioEvent):
                continue
            channel = channel_for_event(event.type)
            if channel is None:
                continue
            self._deliver_local(event, channel)
            portfolio_id = event.portfolio_id
            if not self.listeners:
                continue
            if portfolio_id not in followed:
                followed[portfolio_id] = any(x.watches(portfolio_id) for x in self.listeners)
            if followed[portfolio_id]:
                data = native_data(event.data)
                told.append((channel, portfolio_id, event.type, event.time, data))
        self._tell(told)

    def _deliver_local(self, event: PortfolioEvent, channel: str) -> None:
        portfolio_id = event.portfolio_id
        seq = self._seq[portfolio_id] = self._seq.get(portfolio_id, 0) + 1
        key = (portfolio_id, channel)
        channel_seq = self._channel_seq[key] = self._channel_seq.get(key, 0) + 1
        topic = f"{channel}:{portfolio_id}"
        if self.hub.has(topic):  # numbered always, rendered only when someone listens
            wire = (channel, portfolio_id, event.type, event.time, native_data(event.data))
            self.hub.publish(topic, render(wire, seq, channel_seq))

    def _tell(self, wires: list[Wire]) -> None:
        if not wires:
            return
        for listener in self.listeners:
            try:
                listener.on_wires(wires)
            except Exception:  # a broken listener must not stop the native channels
                log.exception("WebSocket event listener failed")

    def resync(self, portfolio_ids: set[int] | None, reason: str) -> None:
        """Tell local subscribers of these portfolios (None: all) to re-read over REST."""
        for client in list(self.hub.clients):
            affected = client.portfolio_ids
            if portfolio_ids is not None:
                affected &= portfolio_ids
            if affected:
                message = {"type": "resync", "portfolio_ids": sorted(affected), "reason": reason}
                self.hub.send(client, dumps(message))

    # -- Redis ---------------------------------------------------------------------------------

    async def _subscribe(self) -> PubSub:
        assert self.redis is not None
        pubsub = self.redis.pubsub()
        await pubsub.subscribe(self.channel)
        return pubsub

    async def _publish_forever(self) -> None:
        assert self.redis is not None
        script = self.redis.register_script(_PUBLISH)
        publish_failing = False
        while True:
            wires = await self._queue.get()
            keys: list[str] = []
            for channel, portfolio_id, *_ in wires:
                keys.append(f"{self.prefix}:seq:{portfolio_id}")
                keys.append(f"{self.prefix}:seq:{portfolio_id}:{channel}")
            try:
                await script(keys=keys, args=[self.channel, SEQ_TTL_S, orjson.dumps(wires)])
            except (RedisError, OSError) as exc:
                if cancel_requested():
                    raise asyncio.CancelledError from exc
                if not publish_failing:  # once per outage; every batch's clients are told
                    log.error("publishing WebSocket events to Redis failed: %s", exc)
                publish_failing = True
                self.resync({w[1] for w in wires}, "the event relay was unavailable")
                continue
            publish_failing = False

    async def _listen(self) -> None:
        delay = 0.1
        while True:
            pubsub = self._pubsub
            try:
                if pubsub is None:
                    pubsub = self._pubsub = await self._subscribe()
                    self.resync(None, "the event relay reconnected")
                    log.warning("WebSocket event relay reconnected; clients told to resync")
                message = await next_message(pubsub, wait_s=1.0)
                delay = 0.1
            except (RedisError, OSError) as exc:
                if cancel_requested():
                    raise asyncio.CancelledError from exc
                if delay == 0.1:  # once per outage, not once per attempt
                    log.warning("WebSocket event relay lost (%s); reconnecting", exc)
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()  # type: ignore[no-untyped-call]
                self._pubsub = None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if message is not None and message.get("type") == "message":
                self._deliver_relayed(message["data"])

    def _deliver_relayed(self, raw: bytes) -> None:
        try:
            header, _, body = raw.partition(b"\n")
            marks = header.split(b",")
            wires = orjson.loads(body)
        except (ValueError, orjson.JSONDecodeError):
            log.exception("malformed WebSocket event on the relay")
            return
        for mark, wire in zip(marks, wires, strict=False):
            channel, portfolio_id = wire[0], wire[1]
            topic = f"{channel}:{portfolio_id}"
            if self.hub.has(topic):
                seq, _, channel_seq = mark.partition(b":")
                self.hub.publish(topic, render(tuple(wire), int(seq), int(channel_seq)))
        if self.listeners:
            self._tell([tuple(w) for w in wires])
