"""Bodies of /v1/feedback."""

from typing import Literal

from pydantic import Field

from papertrade.kit.schemas import Schema, StrictInput


class FeedbackCreate(StrictInput):
    category: Literal["bug", "idea", "question", "other"]
    text: str = Field(min_length=1, max_length=4000)
    page: str = Field(default="", max_length=300, description="Where it was sent from.")
    app_version: str = Field(default="", max_length=50)


class ScreenshotRead(Schema):
    width: int
    height: int


class FeedbackRead(Schema):
    id: int
    category: str
    text: str
    page: str
    app_version: str
    status: str = Field(description="open or answered")
    answer: str | None
    answered_at: int | None
    created_at: int
    screenshot: ScreenshotRead | None = Field(
        default=None, description="The attached screenshot's size (GET …/screenshot), or null."
    )
