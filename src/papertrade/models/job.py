"""One row per background job run: what it was asked, how far it got, how it ended."""

from typing import Any

from sqlalchemy import JSON, BigInteger, Float, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from papertrade.db import Base


class JobRecord(Base):
    """Written by the job engine's middleware (jobs/recorder.py) in every process and mode."""

    __tablename__ = "jobs"
    __table_args__ = (Index("ix_jobs_name_queued_at", "name", "queued_at"),)

    id: Mapped[str] = mapped_column(String(64), primary_key=True)  # the taskiq task id
    name: Mapped[str] = mapped_column(String(100))
    arguments: Mapped[Any] = mapped_column(JSON, default=dict)
    # queued | running | retrying | succeeded | failed
    status: Mapped[str] = mapped_column(String(10), index=True)
    progress: Mapped[float] = mapped_column(Float, default=0.0)  # 0 to 1
    progress_text: Mapped[str] = mapped_column(String(200), default="")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, default=None)
    result: Mapped[Any] = mapped_column(JSON, default=None, nullable=True)
    worker: Mapped[str] = mapped_column(String(100), default="")  # host:pid of the last run
    queued_at: Mapped[int] = mapped_column(BigInteger)
    started_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    finished_at: Mapped[int | None] = mapped_column(BigInteger, default=None)
    updated_at: Mapped[int] = mapped_column(BigInteger)
