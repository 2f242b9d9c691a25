"""Bodies of /v1/comments."""

from pydantic import Field, field_validator

from papertrade.kit.ids import Id
from papertrade.kit.schemas import Schema, StrictInput

MAX_LENGTH = 2000


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("a comment needs some text")
    return text


class CommentCreate(StrictInput):
    portfolio_id: Id
    text: str = Field(min_length=1, max_length=MAX_LENGTH)
    parent_id: Id | None = Field(default=None, description="Reply to this (top-level) comment.")

    _check = field_validator("text")(_not_blank)


class CommentEdit(StrictInput):
    text: str = Field(min_length=1, max_length=MAX_LENGTH)

    _check = field_validator("text")(_not_blank)


class CommentRead(Schema):
    id: int
    portfolio_id: int
    user_id: int
    parent_id: int | None
    text: str = Field(description="As written: render it escaped (it is not HTML).")
    deleted: bool
    created_at: int
    edited_at: int | None
    replies: list["CommentRead"] = Field(default_factory=list)
