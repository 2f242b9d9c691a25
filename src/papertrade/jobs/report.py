"""`papertrade jobs`: the latest job runs from the jobs table, as a table for a terminal."""

from datetime import UTC, datetime

from sqlalchemy import select

from papertrade.config import Settings
from papertrade.db import Database
from papertrade.models import JobRecord

COLUMNS = ("id", "name", "status", "attempts", "progress", "queued (UTC)", "worker", "note")


async def latest(settings: Settings, limit: int, name: str | None) -> list[JobRecord]:
    """The newest `limit` runs, of the job `name` if given."""
    db = Database(
        settings.database_url, settings.database_pool_size, settings.database_max_overflow
    )
    try:
        statement = select(JobRecord).order_by(JobRecord.queued_at.desc()).limit(limit)
        if name:
            statement = statement.where(JobRecord.name == name)
        async with db.reader() as session:
            return list(await session.scalars(statement))
    finally:
        await db.dispose()


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _note(row: JobRecord) -> str:
    text = row.error or row.progress_text or ("" if row.result is None else str(row.result))
    return " ".join(text.split())[:80]


def render(rows: list[JobRecord]) -> str:
    """Aligned columns, newest first; the note is the error, else the progress note or result."""
    lines = [COLUMNS] + [
        (
            row.id[:12],
            row.name,
            row.status,
            str(row.attempts),
            f"{row.progress:.0%}",
            _when(row.queued_at),
            row.worker,
            _note(row),
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in lines
    )
