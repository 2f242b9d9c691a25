"""What comments emit: a new one is durable, so the inbox (issue #18) tells the owner of the
portfolio or strategy (and, for a reply, the author of the comment replied to); both reach the
sockets of the users they concern on the `social` channel (ws/social.py)."""

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class CommentEvent(DomainEvent):
    """One comment, on exactly one of a portfolio and a strategy; the body names the people
    concerned, never the words."""

    comment_id: int
    portfolio_id: int | None
    strategy_id: int | None
    author_user_id: int
    owner_user_id: int

    @property
    def data(self) -> Mapping[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "time"}


@dataclass(frozen=True, slots=True, kw_only=True)
class CommentPosted(CommentEvent):
    type = "comment.posted"
    durable = True
    parent_author_user_id: int | None
    author_name: str = ""  # the author's public name, for the notification
    target_name: str = ""  # the portfolio's or strategy's name


@dataclass(frozen=True, slots=True, kw_only=True)
class CommentDeleted(CommentEvent):
    """Its author or the owner deleted it (the other one hears of it on the socket). Not
    durable: nothing but the sockets is told."""

    type = "comment.deleted"
    deleted_by_user_id: int
