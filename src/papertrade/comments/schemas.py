"""Bodies of /v1/comments."""

from pydantic import Field, field_validator, model_validator

from papertrade.kit.ids import Id
from papertrade.kit.schemas import Schema, StrictInput

MAX_LENGTH = 2000


def _not_blank(text: str) -> str:
    if not text.strip():
        raise ValueError("a comment needs some text")
    return text


ONE_TARGET = "give exactly one of portfolio_id or strategy_id"


class CommentCreate(StrictInput):
    portfolio_id: Id | None = Field(
        default=None, description="Comment on this portfolio (or give strategy_id)."
    )
    strategy_id: Id | None = Field(
        default=None, description="Comment on this strategy (or give portfolio_id)."
    )
    text: str = Field(min_length=1, max_length=MAX_LENGTH)
    parent_id: Id | None = Field(default=None, description="Reply to this (top-level) comment.")

    _check = field_validator("text")(_not_blank)

    @model_validator(mode="after")
    def _one_target(self) -> "CommentCreate":
        if (self.portfolio_id is None) == (self.strategy_id is None):
            raise ValueError(ONE_TARGET)
        return self


class CommentEdit(StrictInput):
    text: str = Field(min_length=1, max_length=MAX_LENGTH)

    _check = field_validator("text")(_not_blank)


class CommentRead(Schema):
    id: int
    portfolio_id: int | None
    strategy_id: int | None
    user_id: int
    author_name: str = Field(
        default="", description="The author's public name (their profile is /u/{user_id})."
    )
    parent_id: int | None
    text: str = Field(description="As written: render it escaped (it is not HTML).")
    deleted: bool
    created_at: int
    edited_at: int | None
    replies: list["CommentRead"] = Field(default_factory=list)
