"""The job engine of one process: taskiq's broker, its consumer and, on the leader, its scheduler.

Every process of a deployment builds one (API processes and `papertrade worker` alike) with the
same declared jobs. Only the elected engine leader runs the scheduler (`lead`/`follow`, called by
engine/leader.py), so a job scheduled once is sent once however many processes run.
"""

import asyncio
import inspect
import logging
import os
import socket
import typing
from collections.abc import Awaitable, Callable, Iterable
from datetime import timedelta
from typing import Annotated, Any, ParamSpec

from taskiq import Context, InMemoryBroker, ScheduleSource, TaskiqDepends, TaskiqScheduler
from taskiq.api import run_scheduler_task
from taskiq.receiver import Receiver
from taskiq.schedule_sources import LabelScheduleSource

from papertrade.context import AppContext
from papertrade.jobs.broker import LocalBroker, build_broker, is_scale_out
from papertrade.jobs.cpu import CpuPool
from papertrade.jobs.declare import Job
from papertrade.jobs.recorder import JobRecorder, attempt_of
from papertrade.jobs.run import JobRun
from papertrade.kit.tasks import stop_within, wait_up_to

P = ParamSpec("P")
log = logging.getLogger("papertrade.jobs")

SCHEDULE_POLL = timedelta(seconds=1)  # how soon a retry waiting for its time is seen
CONCURRENCY = 20  # jobs one process runs at once from the Redis queue
STOP_WAIT_S = 10.0  # how long a stopping process lets running jobs finish
RECONNECT_S = (1, 2, 5, 10)


class Jobs:
    """Enqueues, runs and schedules the declared jobs of this process."""

    def __init__(self, ctx: AppContext, jobs: Iterable[Job[Any]], *, consume: bool | None = None):
        settings = ctx.settings
        self.ctx = ctx
        self.scale_out = is_scale_out(settings)
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self.recorder = JobRecorder(ctx.db, self.worker)
        self.broker, self._retries = build_broker(settings, self.recorder)
        self.cpu = CpuPool(settings.jobs_cpu_processes)
        self.sandbox = CpuPool(settings.jobs_sandbox_processes)  # Python strategies' backtests
        # Embedded, a job runs where it was enqueued; scaled out, whoever consumes takes it.
        self.consumes = consume if consume is not None else settings.jobs_in_process
        self._arguments: dict[str, inspect.Signature] = {}
        self._consumer: asyncio.Task[None] | None = None
        self._stop_consuming = asyncio.Event()
        self._schedulers: list[asyncio.Task[None]] = []  # this process's own (embedded retries)
        self._leading: asyncio.Task[None] | None = None
        for job in jobs:
            self.add(job)

    def add(self, job: Job[Any]) -> None:
        """Register `job` with this process's broker (before or after start)."""
        labels: dict[str, Any] = {
            "retry_on_error": job.attempts > 1,
            "max_retries": job.attempts,
            "delay": job.retry_delay_s,
        }
        interval = job.every(self.ctx.settings) if job.every is not None else 0
        if interval > 0:  # 0: declared but not scheduled (taskiq would run it at once anyway)
            labels["schedule"] = [{"interval": interval, "schedule_id": job.name}]
        self.broker.register_task(self._body(job), task_name=job.name, **labels)

    def _body(self, job: Job[Any]) -> Callable[..., Awaitable[Any]]:
        """The function taskiq runs for `job`, with the signature of the job's arguments (taskiq
        casts what arrives by it) and, for a coroutine body, taskiq's context to make its run."""
        hints = typing.get_type_hints(job.function)
        parameters = list(inspect.signature(job.function).parameters.values())
        if job.cpu:
            body = self._cpu_body(job.function)
        else:
            parameters = parameters[1:]  # the JobRun, made in _run_body
            body = self._run_body(job.function)
        self._arguments[job.name] = inspect.Signature(parameters)
        annotations = {p.name: hints[p.name] for p in parameters if p.name in hints}
        if not job.cpu:
            context = Annotated[Context, TaskiqDepends()]
            kind = inspect.Parameter.KEYWORD_ONLY
            parameters.append(inspect.Parameter("context", kind, annotation=context))
            annotations["context"] = context
        body.__annotations__ = annotations
        setattr(body, "__signature__", inspect.Signature(parameters))  # noqa: B010
        return body

    def _cpu_body(self, function: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
        async def body(*args: Any, **kwargs: Any) -> Any:
            return await self.cpu.run(function, *args, **kwargs)

        return body

    def _run_body(self, function: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def body(*args: Any, context: Context, **kwargs: Any) -> Any:
            message = context.message
            attempt = attempt_of(message)
            run = JobRun(
                message.task_id,
                message.task_name,
                attempt,
                self.ctx,
                self.recorder.progress,
                self.cpu,
                self.sandbox,
            )
            return await function(run, *args, **kwargs)

        return body

    async def enqueue(self, job: Job[P], *args: P.args, **kwargs: P.kwargs) -> str:
        """Send one run of `job`; returns its id (the jobs table's). Arguments travel as JSON."""
        task = self.broker.find_task(job.name)
        if task is None:
            raise LookupError(f"job {job.name!r} is not registered in this process")
        # By name: the queue, the retries and the jobs table all see the arguments by name.
        arguments = self._arguments[job.name].bind(*args, **kwargs).arguments
        sent = await task.kiq(**arguments)
        return sent.task_id

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect the broker; consume the shared queue (scale-out) or keep retries (embedded)."""
        await self.broker.startup()
        if not self.scale_out:
            self._schedulers.append(self._scheduler([self._retries], "jobs-retries"))
        elif self.consumes:
            self._stop_consuming.clear()
            self._consumer = asyncio.create_task(self._consume_forever(), name="jobs-consumer")

    async def lead(self) -> None:
        """This process was elected: run the scheduler (scheduled jobs, and shared retries)."""
        if self._leading is not None:
            return
        sources: list[ScheduleSource] = [LabelScheduleSource(self.broker)]
        if self.scale_out:
            sources.append(self._retries)
        self._leading = self._scheduler(sources, "jobs-scheduler")
        log.info("jobs: this process runs the scheduler")

    async def follow(self) -> None:
        """Another process leads (or this one stops): no scheduler here."""
        leading, self._leading = self._leading, None
        if leading is not None:
            await _cancel(leading)

    async def stop(self) -> None:
        """Stop scheduling and consuming, let running jobs finish (for a while), disconnect."""
        if isinstance(self.broker, LocalBroker):
            self.broker.stopping = True
        await self.follow()
        for task in self._schedulers:
            await _cancel(task)
        self._schedulers.clear()
        if self._consumer is not None:
            self._stop_consuming.set()
            if not await stop_within(self._consumer, STOP_WAIT_S + 1):
                log.warning("jobs: the consumer did not stop (is Redis answering?); left behind")
            self._consumer = None
        if isinstance(self.broker, InMemoryBroker):
            try:
                async with asyncio.timeout(STOP_WAIT_S):
                    await self.broker.wait_all()
            except TimeoutError:
                log.warning("jobs: stopping with jobs still running")
        await self.broker.shutdown()
        await self._retries.shutdown()
        await self.cpu.close()
        await self.sandbox.close()

    def _scheduler(self, sources: list[ScheduleSource], name: str) -> asyncio.Task[None]:
        scheduler = TaskiqScheduler(self.broker, sources)
        return asyncio.create_task(run_scheduler_task(scheduler, interval=SCHEDULE_POLL), name=name)

    async def _consume_forever(self) -> None:
        """Take jobs from the Redis stream until stopped; reconnect when Redis goes away."""
        failures = 0
        while not self._stop_consuming.is_set():
            receiver = Receiver(
                self.broker,
                run_startup=False,
                max_async_tasks=CONCURRENCY,
                wait_tasks_timeout=STOP_WAIT_S,
            )
            try:
                await receiver.listen(self._stop_consuming)
                failures = 0
            except Exception as exc:
                delay = RECONNECT_S[min(failures, len(RECONNECT_S) - 1)]
                failures += 1
                log.warning("jobs: reading the queue failed (%s); again in %d s", exc, delay)
                await wait_up_to(self._stop_consuming, delay)


async def _cancel(task: asyncio.Task[None]) -> None:
    if not await stop_within(task, 0):
        log.warning("jobs: %s did not stop (is Redis answering?); left behind", task.get_name())
