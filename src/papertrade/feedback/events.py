"""What feedback emits: durable, so the inbox (issue #18) delivers every answer."""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from papertrade.events import DomainEvent


@dataclass(frozen=True, slots=True, kw_only=True)
class FeedbackAnswered(DomainEvent):
    type = "feedback.answered"
    durable = True
    user_id: int
    feedback_id: int
    answer: str

    @property
    def data(self) -> Mapping[str, Any]:
        return {"user_id": self.user_id, "feedback_id": self.feedback_id, "answer": self.answer}
