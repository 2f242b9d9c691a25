"""What a running job is handed: its identity, the process's resources and a progress reporter."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from papertrade.context import AppContext

ProgressWriter = Callable[[str, float, str], Awaitable[None]]


@dataclass(frozen=True)
class JobRun:
    """One run of a job (the first argument of every queued and scheduled job's body)."""

    id: str
    name: str
    attempt: int  # 1 for the first run, 2 for the first retry, …
    ctx: AppContext
    _write_progress: ProgressWriter = field(repr=False)

    async def progress(self, done: float, text: str = "") -> None:
        """Record how far the job got (0 to 1) and a short note, for whoever watches the jobs
        table. Call it outside a database transaction of the job: it writes a row of its own."""
        await self._write_progress(self.id, done, text)
