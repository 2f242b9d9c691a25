"""What comments emit: a new one is durable, so the inbox (issue #18) tells the owner of the
portfolio or strategy (and, for a reply, the author of the comment replied to); both reach the
sockets of the users they concern on the `social` channel (ws/social.py)."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class CommentPosted(DomainEvent):
    type = "comment.posted"
    durable = True
    comment_id: int
    portfolio_id: int | None  # exactly one of portfolio_id and strategy_id
    strategy_id: int | None
    author_user_id: int
    owner_user_id: int
    parent_author_user_id: int | None

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "comment_id": self.comment_id,
            "portfolio_id": self.portfolio_id,
            "strategy_id": self.strategy_id,
            "author_user_id": self.author_user_id,
            "owner_user_id": self.owner_user_id,
            "parent_author_user_id": self.parent_author_user_id,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class CommentDeleted(DomainEvent):
    """Its author or the owner deleted it (the other one hears of it on the socket). Not
    durable: nothing but the sockets is told."""

    type = "comment.deleted"
    comment_id: int
    portfolio_id: int | None
    strategy_id: int | None
    author_user_id: int
    owner_user_id: int
    deleted_by_user_id: int

    @property
    def data(self) -> Mapping[str, Any]:
        return {
            "comment_id": self.comment_id,
            "portfolio_id": self.portfolio_id,
            "strategy_id": self.strategy_id,
            "author_user_id": self.author_user_id,
            "owner_user_id": self.owner_user_id,
            "deleted_by_user_id": self.deleted_by_user_id,
        }
