"""The taskiq middleware that writes every job run into the jobs table, in both modes alike."""

import logging
from typing import Any

from pydantic_core import to_jsonable_python
from sqlalchemy import Executable, insert, update
from sqlalchemy.dialects import postgresql, sqlite
from taskiq import TaskiqMessage, TaskiqMiddleware, TaskiqResult
from taskiq.exceptions import NoResultError

from papertrade.db import Database
from papertrade.faults.outage import log_failure
from papertrade.kit.time import now_ms
from papertrade.models import JobRecord

log = logging.getLogger("papertrade.jobs")
PROGRESS_TEXT_LIMIT = 200
ERROR_LIMIT = 4000


def attempt_of(message: TaskiqMessage) -> int:
    """1 for a first run; taskiq's retry middleware counts the retries in a label."""
    return int(message.labels.get("_retries", 0)) + 1


def describe(exception: BaseException) -> str:
    text = f"{type(exception).__name__}: {exception}"
    return text[:ERROR_LIMIT]


def _jsonable(value: Any) -> Any:
    try:
        return to_jsonable_python(value)
    except Exception:  # what the job returned is shown, whatever it is
        return repr(value)


class JobRecorder(TaskiqMiddleware):
    """queued when sent, running when a worker starts it, then succeeded, retrying or failed.

    Placed before the retry middleware: taskiq calls `on_error` in reverse order, so by the time
    the recorder sees a failure the retry middleware has already decided (and, when it sends the
    job again, replaced the result's error with NoResultError).
    """

    def __init__(self, db: Database, worker: str):
        super().__init__()
        self.db = db
        self.worker = worker

    async def pre_send(self, message: TaskiqMessage) -> TaskiqMessage:
        # Before the message leaves: a worker may start it before the sender goes on. A retry
        # sends the same id again; its row keeps saying `retrying`.
        now = now_ms()
        row = {
            "id": message.task_id,
            "name": message.task_name,
            "arguments": message.model_dump(mode="json")["kwargs"],
            "status": "queued",
            "progress": 0.0,
            "progress_text": "",
            "attempts": 0,
            "worker": "",
            "queued_at": now,
            "updated_at": now,
        }
        dialect_insert = sqlite.insert if self.db.is_sqlite else postgresql.insert
        await self._write(dialect_insert(JobRecord).values(row).on_conflict_do_nothing())
        return message

    async def pre_execute(self, message: TaskiqMessage) -> TaskiqMessage:
        await self._update(
            message,
            status="running",
            attempts=attempt_of(message),
            started_at=now_ms(),
            worker=self.worker,
        )
        return message

    async def on_error(
        self, message: TaskiqMessage, result: TaskiqResult[Any], exception: BaseException
    ) -> None:
        retrying = isinstance(result.error, NoResultError) and not isinstance(
            exception, NoResultError
        )
        if retrying:
            await self._update(message, status="retrying", error=describe(exception))
        else:
            await self._update(
                message, status="failed", error=describe(exception), finished_at=now_ms()
            )

    async def post_execute(self, message: TaskiqMessage, result: TaskiqResult[Any]) -> None:
        if result.is_err:
            return  # on_error has said how it ended
        await self._update(
            message,
            status="succeeded",
            progress=1.0,
            error=None,
            result=_jsonable(result.return_value),
            finished_at=now_ms(),
        )

    async def progress(self, job_id: str, done: float, text: str) -> None:
        """A running job's own report of how far it got."""
        statement = (
            update(JobRecord)
            .where(JobRecord.id == job_id)
            .values(
                progress=min(max(float(done), 0.0), 1.0),
                progress_text=text[:PROGRESS_TEXT_LIMIT],
                updated_at=now_ms(),
            )
        )
        await self._write(statement)

    async def _update(self, message: TaskiqMessage, **values: Any) -> None:
        values["updated_at"] = now_ms()
        statement = update(JobRecord).where(JobRecord.id == message.task_id).values(values)
        if await self._write(statement) == 0:
            # Sent by a process that could not record it (its database write failed): the row
            # starts here, so the run is still visible.
            row = {
                "id": message.task_id,
                "name": message.task_name,
                "arguments": message.model_dump(mode="json")["kwargs"],
                "status": "queued",
                "worker": "",
                "queued_at": values["updated_at"],
                **values,
            }
            await self._write(insert(JobRecord).values(row))

    async def _write(self, statement: Executable) -> int:
        """Run one statement in a unit of work of its own; how many rows it touched (-1: failed).

        A job runs whether or not its row could be written: the jobs table reports, it does not
        decide."""
        try:
            # Only the jobs table: the SQLite order writer keeps its memory (db.unit_of_work).
            async with self.db.unit_of_work(keeps_writer_memory=True) as session:
                outcome = await session.execute(statement)
        except Exception as exc:  # the database away or busy: told once (faults/outage.py)
            log_failure(log, "recording a job run failed", exc, self.db.outages)
            return -1
        return int(getattr(outcome, "rowcount", -1))
