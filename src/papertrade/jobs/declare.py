"""How a domain package declares its jobs (in its own `jobs.py`): queued, scheduled or CPU-heavy.

A declaration is plain data: the job engine of each process (jobs/runtime.py) registers it with
its taskiq broker at start, so several apps in one process (the tests) each run their own.
"""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Concatenate, Generic, ParamSpec

from papertrade.config import Settings
from papertrade.jobs.run import JobRun

P = ParamSpec("P")

DEFAULT_ATTEMPTS = 3
DEFAULT_RETRY_DELAY_S = 5


@dataclass(frozen=True, eq=False)
class Job(Generic[P]):
    """A job's name (as the jobs table shows it), its body and how it runs.

    `every` makes it a scheduled job: it gives the interval in whole seconds from the settings.
    `cpu`: the body is a plain function run in the process pool (jobs/cpu.py), not a coroutine.
    A failed run is tried again after `retry_delay_s` × the number of runs so far (at most five
    minutes), until `attempts` runs have failed.
    """

    name: str
    function: Callable[..., Any]
    attempts: int
    retry_delay_s: int
    every: Callable[[Settings], int] | None = None
    cpu: bool = False


def queued(
    name: str,
    function: Callable[Concatenate[JobRun, P], Awaitable[Any]],
    *,
    attempts: int = DEFAULT_ATTEMPTS,
    retry_delay_s: int = DEFAULT_RETRY_DELAY_S,
) -> Job[P]:
    """A job that runs when something enqueues it: `await jobs.enqueue(JOB, arg=…)`."""
    return Job(name, function, attempts, retry_delay_s)


def scheduled(
    name: str,
    function: Callable[[JobRun], Awaitable[Any]],
    *,
    every: Callable[[Settings], int],
    attempts: int = 1,
    retry_delay_s: int = DEFAULT_RETRY_DELAY_S,
) -> Job[[]]:
    """A job the elected leader's scheduler enqueues every `every(settings)` seconds, the first
    time as soon as it is elected; 0 seconds leaves it unscheduled (a failed
    run is simply done again at the next interval unless `attempts` says otherwise)."""
    return Job(name, function, attempts, retry_delay_s, every=every)


def cpu_heavy(
    name: str,
    function: Callable[P, Any],
    *,
    attempts: int = 1,
    retry_delay_s: int = DEFAULT_RETRY_DELAY_S,
) -> Job[P]:
    """A queued job whose body is CPU work: a module-level function of JSON-able arguments that
    returns a JSON-able result. It runs in a separate process, so the event loop stays free."""
    return Job(name, function, attempts, retry_delay_s, cpu=True)
