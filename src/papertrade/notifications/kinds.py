"""What a kind of notification is, and how an outbox event becomes one.

A kind names what the user chooses channels for ("fill", "liquidation"…). Another area adds its
own kind by declaring a `Kind` with renderers for its durable events and adding it to
`catalogue.py`; the inbox consumer, the preferences and the API pick it up from there.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from papertrade.models.portfolio import code_of as portfolio_code
from papertrade.models.strategy import code_of as strategy_code
from papertrade.outbox.store import StoredEvent


@dataclass(frozen=True, slots=True)
class Channels:
    """Where one kind of notification goes."""

    inbox: bool = True
    telegram: bool = False
    email: bool = False

    def as_dict(self) -> dict[str, bool]:
        return {"inbox": self.inbox, "telegram": self.telegram, "email": self.email}


@dataclass(frozen=True, slots=True)
class Message:
    """A notification's text, rendered once for every channel."""

    title: str
    body: str = ""
    data: Mapping[str, Any] = field(default_factory=dict)
    telegram: str | None = None  # HTML for Telegram when it differs (a Cornix signal block)
    # The channels its source allows (a subscription's own choice); None: whatever the user
    # chose for the kind. The user's choice still applies: a channel must be in both.
    channels: frozenset[str] | None = None
    # The web page it is about, as a path (page_of); the Telegram block's footer links to it
    # (domain rules B2.7), made absolute with the deployment's public address by the consumer.
    link: str | None = None


def page_of(*, portfolio_id: Any = None, strategy_id: Any = None) -> str | None:
    """The page of a portfolio (/p/<code>) or a strategy (/s/<code>), as a path: public ones for
    anyone, a private one for its owner. None when neither is named."""
    if strategy_id is not None:
        return f"/s/{strategy_code(int(strategy_id))}"
    if portfolio_id is not None:
        return f"/p/{portfolio_code(int(portfolio_id))}"
    return None


# None: this event is not worth telling the user about (e.g. an order that only rests).
Render = Callable[[StoredEvent], Message | None]
# Who is told of an event, by user id; without one, the owner of the event's portfolio is.
Recipients = Callable[[StoredEvent], Iterable[int]]


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    description: str
    defaults: Channels
    renderers: Mapping[str, Render] = field(default_factory=dict)  # outbox event type → text
    recipients: Mapping[str, Recipients] = field(default_factory=dict)  # outbox event type → who
    # Channels the user cannot turn off (security notices must reach the inbox).
    always: frozenset[str] = frozenset()


def users(*fields: str) -> Recipients:
    """The users named by `fields` of the event's data (None and repeats left out)."""

    def named(event: StoredEvent) -> Iterable[int]:
        found = (event.data.get(name) for name in fields)
        return dict.fromkeys(int(user) for user in found if user is not None)

    return named
