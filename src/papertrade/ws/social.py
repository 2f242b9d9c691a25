"""The `social` channel: copy-trading, subscription and comment events to the sockets of the
users they concern, in every process (docs/websocket.md, docs/social.md).

A follower hears of each copied fill (`copy.filled`) and skip (`copy.skipped`); both sides of
a relation hear it end (`copy.ended`) and settle (`copy.settled`); a subscriber hears each signal
(`subscription.signal`) and each change of their subscription (`subscription.changed`: paid,
renewed, past_due, cancelling, ended); the owner of a portfolio or strategy hears of each
comment on it, and the author a reply answers of the reply (`comment.posted`); the author and
the owner hear of a comment's deletion (`comment.deleted`). Nobody hears of what they did
themselves. The events are made by whichever process commits them (the engine leader's outbox
consumers, a job worker, a request), so delivery follows the inbox relay: local without Redis,
one Redis publish per batch with it. The REST resources stay the truth; the socket says what
happened now.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import orjson
from redis.asyncio import Redis
from redis.exceptions import RedisError

from papertrade.events import DomainEvent
from papertrade.kit.deployment import namespace
from papertrade.kit.tasks import cancel_requested
from papertrade.ws.channels import SOCIAL
from papertrade.ws.frames import dumps, native_data
from papertrade.ws.hub import Hub
from papertrade.ws.inbox import InboxRelay, log

# Who hears of each event: the data fields naming users.
RECIPIENTS: Mapping[str, tuple[str, ...]] = {
    "copy.filled": ("user_id",),
    "copy.skipped": ("user_id",),
    "copy.ended": ("user_id", "leader_user_id"),
    "copy.settled": ("follower_user_id", "leader_user_id"),
    "subscription.signal": ("user_id",),
    "subscription.changed": ("user_id",),
    "comment.posted": ("owner_user_id", "parent_author_user_id"),
    "comment.deleted": ("author_user_id", "owner_user_id"),
}
# Who is not told though named above: whoever did it (an owner commenting on their own
# portfolio, an author deleting their own comment), as the inbox never tells one their own words.
NOT_TOLD: Mapping[str, str] = {
    "comment.posted": "author_user_id",
    "comment.deleted": "deleted_by_user_id",
}


def items_of(
    events: Sequence[DomainEvent], listening: Callable[[int], bool] | None = None
) -> list[dict[str, Any]]:
    """One item per (recipient, event), in the events' order; only for recipients `listening`
    says hold a socket here (None: every recipient, for the other processes too)."""
    items: list[dict[str, Any]] = []
    for event in events:
        fields = RECIPIENTS.get(event.type)
        if fields is None:
            continue
        raw = event.data
        actor = raw.get(NOT_TOLD.get(event.type, ""))
        users = [int(raw[f]) for f in fields if raw.get(f) is not None and raw[f] != actor]
        if listening is not None:
            users = [user for user in users if listening(user)]
        if not users:
            continue  # a copy fans out to 1,000 followers: most hold no socket
        data = native_data(raw)
        message = {"channel": SOCIAL, "type": event.type, "time": event.time, "data": data}
        items.extend({"user_id": user, "message": message} for user in dict.fromkeys(users))
    return items


class SocialRelay(InboxRelay):
    """The inbox relay's delivery (local, or through Redis to every process) for `social`."""

    def __init__(self, hub: Hub, redis: Redis | None, database_url: str):
        super().__init__(hub, redis, database_url)
        self.channel = f"pt:{namespace(database_url)}:ws:social"

    async def on_events(self, events: Sequence[DomainEvent]) -> None:
        if self.redis is None:  # one process: only the sockets held here
            self.deliver_items(items_of(events, lambda user: self.hub.has(f"{SOCIAL}:{user}")))
            return
        items = items_of(events)
        if not items:
            return
        try:
            await self.redis.publish(self.channel, orjson.dumps(items))
        except (RedisError, OSError) as exc:
            if cancel_requested():
                raise
            log.error("relaying %d social events to sockets failed: %s", len(items), exc)

    def received(self, wire: Any) -> None:
        """This relay publishes a list of (user, message) items, not the inbox's batch."""
        self.deliver_items(wire)

    def deliver_items(self, items: Sequence[Mapping[str, Any]]) -> None:
        for item in items:
            topic = f"{SOCIAL}:{item['user_id']}"
            if self.hub.has(topic):
                self.hub.publish(topic, dumps(item["message"]))
