"""New notifications to the `inbox` channel of their owners' sockets, in every process; and
the progress of backtests to the `backtests` channel of theirs, the same way (a backtest runs
as a job, in a `papertrade worker` process when scaled out).

Notifications are made by the outbox consumer, which runs in the engine leader only; a user's
socket may be held by any process. Without Redis there is one process and delivery is local;
with Redis the leader publishes each batch once and every process (itself included) delivers
what it hears to the sockets it holds. A socket that misses one (Redis down) re-reads
GET /v1/inbox: the rows are the truth, the socket only says "look".
"""

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from papertrade.events import DomainEvent
from papertrade.kit.deployment import namespace
from papertrade.kit.tasks import cancel_redis_listeners, cancel_requested, next_message
from papertrade.kit.time import now_ms
from papertrade.ws.channels import BACKTESTS, INBOX
from papertrade.ws.frames import dumps
from papertrade.ws.hub import Hub

log = logging.getLogger("papertrade.ws")
EVENT_TYPE = "notification.created"
# the events that go to a channel of their user's: type → channel
USER_EVENTS = {
    EVENT_TYPE: INBOX,
    "backtest.progress": BACKTESTS,
}


class InboxRelay:
    def __init__(self, hub: Hub, redis: Redis | None, database_url: str):
        self.hub = hub
        self.redis = redis
        self.channel = f"pt:{namespace(database_url)}:ws:inbox"
        self._task: asyncio.Task[None] | None = None
        self.ready = asyncio.Event()

    async def start(self) -> None:
        if self.redis is not None:
            self._task = asyncio.create_task(self._listen(), name="ws-inbox-listen")
        else:
            self.ready.set()

    async def stop(self) -> None:
        task, self._task = self._task, None
        await cancel_redis_listeners(task)

    async def on_events(self, events: Sequence[DomainEvent]) -> None:
        """The EventBus subscriber (after each commit)."""
        for event in events:
            channel = USER_EVENTS.get(event.type)
            if channel is None:
                continue
            items = _items(event)
            if self.redis is None:
                self.deliver(channel, event.type, items)
                continue
            wire = {"channel": channel, "type": event.type, "items": list(items)}
            try:
                await self.redis.publish(self.channel, orjson.dumps(wire))
            except (RedisError, OSError) as exc:
                if cancel_requested():
                    raise
                log.error("relaying %d %s to sockets failed: %s", len(items), event.type, exc)

    def deliver(self, channel: str, event_type: str, items: Sequence[Mapping[str, Any]]) -> None:
        """Send each item to its owner's `channel` subscribers in this process."""
        for item in items:
            topic = f"{channel}:{item['user_id']}"
            if self.hub.has(topic):
                shown = {k: v for k, v in item.items() if k != "user_id"}
                message = {"channel": channel, "type": event_type, "time": now_ms(), "data": shown}
                self.hub.publish(topic, dumps(message))

    async def _listen(self) -> None:
        assert self.redis is not None
        delay = 0.1
        pubsub: PubSub | None = None
        while True:
            try:
                if pubsub is None:
                    pubsub = self.redis.pubsub()
                    await pubsub.subscribe(self.channel)
                    self.ready.set()
                message = await next_message(pubsub, wait_s=1.0)
                delay = 0.1
            except (RedisError, OSError) as exc:
                if cancel_requested():
                    raise asyncio.CancelledError from exc
                log.warning("inbox relay lost (%s); reconnecting", exc)
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()  # type: ignore[no-untyped-call]
                pubsub = None
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            except asyncio.CancelledError:
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()  # type: ignore[no-untyped-call]
                raise
            if message is not None and message.get("type") == "message":
                try:
                    self.received(orjson.loads(message["data"]))
                except (ValueError, KeyError, TypeError):
                    log.exception("malformed message on the %s relay", self.channel)

    def received(self, wire: Any) -> None:
        """Deliver what another process (or this one) published on the relay's channel."""
        self.deliver(wire["channel"], wire["type"], wire["items"])


def _items(event: DomainEvent) -> Sequence[Mapping[str, Any]]:
    """The per-user items of an event: a batch of notifications, or the event's own data
    (which names its `user_id`)."""
    if event.type == EVENT_TYPE:
        notifications: Sequence[Mapping[str, Any]] = getattr(event, "notifications", ())
        return notifications
    return [event.data]
