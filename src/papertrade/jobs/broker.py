"""taskiq's broker for this deployment: in process when embedded, a Redis stream when scaled out.

Embedded (SQLite, or PostgreSQL without Redis): taskiq's InMemoryBroker runs each job in the
process that enqueued it; retries wait in memory. Scale-out (PostgreSQL and Redis): a Redis stream
with one consumer group, so each job is taken by exactly one consumer (an API process or a
`papertrade worker`), and is delivered again if the consumer that took it died before finishing;
retries wait in Redis until the leader's scheduler sends them again.
"""

import datetime
import logging

from redis.asyncio import Redis
from taskiq import AsyncBroker, BrokerMessage, InMemoryBroker, ScheduledTask, ScheduleSource
from taskiq.middlewares import SmartRetryMiddleware
from taskiq.serializers import JSONSerializer
from taskiq_redis import ListRedisScheduleSource, RedisStreamBroker

from papertrade.config import Settings
from papertrade.jobs.recorder import JobRecorder
from papertrade.kit.deployment import namespace

CONSUMER_GROUP = "papertrade"
STREAM_LIMIT = 100_000  # entries kept in the stream (handled ones included); older are trimmed
MAX_RETRY_DELAY_S = 300
MINUTE = datetime.timedelta(minutes=1)
RECENT = 10 * MINUTE  # past minutes the leader reads at each poll for retries still waiting
SCAN_COUNT = 1000
log = logging.getLogger("papertrade.jobs")


def is_scale_out(settings: Settings) -> bool:
    """Several processes share PostgreSQL and Redis: jobs travel through Redis."""
    return bool(settings.redis_url) and not settings.is_sqlite


def queue_name(settings: Settings) -> str:
    """The Redis stream of this deployment (processes sharing a database share it)."""
    return f"pt:{namespace(settings.database_url)}:jobs"


class RedisRetries(ListRedisScheduleSource):
    """taskiq-redis's schedule source, which leaves its connections open when shut down, reads
    back the minute a retry is due in from its key, and finds past minutes' retries without
    scanning Redis's whole keyspace each second."""

    _looked_at: datetime.datetime | None = None  # the minute of the last look at past minutes

    async def startup(self) -> None:
        self._looked_at = None  # a scheduler starts (this process leads): look at every minute
        await super().startup()

    async def shutdown(self) -> None:
        await self._connection_pool.disconnect()

    async def _get_previous_time_schedules(self) -> list[bytes]:
        # taskiq-redis scans the whole keyspace for past minutes' keys at every poll (each
        # second, ten keys per round trip: thousands of round trips on a busy Redis). Here: the
        # few minutes before this one in one round trip, and the whole scan only when a
        # scheduler starts or after a longer gap.
        now = datetime.datetime.now(datetime.UTC).replace(second=0, microsecond=0)
        async with Redis(connection_pool=self._connection_pool) as redis:
            if self._looked_at is None or now - self._looked_at > RECENT:
                found = redis.scan_iter(f"{self._prefix}:time:*", count=SCAN_COUNT)
                keys = [key.decode() async for key in found]
                keys = [k for k in keys if (t := self._parse_time_key(k)) is not None and t < now]
            else:
                minutes = range(1, RECENT // MINUTE + 1)
                keys = [self._get_time_key(now - m * MINUTE) for m in minutes]
            lists = redis.pipeline(transaction=False)
            for key in keys:
                lists.lrange(key, 0, -1)
            schedules = [entry for listed in await lists.execute() for entry in listed]
        self._looked_at = now
        return schedules

    def _parse_time_key(self, key: str) -> datetime.datetime | None:
        # taskiq-redis reads the minute after the key's second colon, and our prefix has colons
        # of its own (pt:<deployment>:jobs:retries): every retry due in a minute that had ended
        # was skipped, so one due in a minute's last second, or while the leader was busy or
        # taking over, was never sent, and its job stayed `retrying` for good.
        minute = key.rpartition(":time:")[2]
        try:
            return datetime.datetime.strptime(minute, "%Y-%m-%dT%H:%M").replace(tzinfo=datetime.UTC)
        except ValueError:
            return None


class LocalBroker(InMemoryBroker):
    """taskiq's in-process broker, which starts no job once its process is stopping: the
    scheduler sends each due job from a task of its own, which can outlive the scheduler by a
    moment and would start a job after the database has closed."""

    stopping = False

    async def kick(self, message: BrokerMessage) -> None:
        if self.stopping:
            log.info("jobs: %s not started, this process is stopping", message.task_name)
            return
        await super().kick(message)


class WaitingRetries(ScheduleSource):
    """Failed runs waiting for their retry time, in this process (embedded mode has no Redis)."""

    def __init__(self) -> None:
        self._waiting: dict[str, ScheduledTask] = {}

    async def get_schedules(self) -> list[ScheduledTask]:
        return list(self._waiting.values())

    async def add_schedule(self, schedule: ScheduledTask) -> None:
        self._waiting[schedule.schedule_id] = schedule

    async def delete_schedule(self, schedule_id: str) -> None:
        self._waiting.pop(schedule_id, None)

    def post_send(self, task: ScheduledTask) -> None:
        self._waiting.pop(task.schedule_id, None)


def build_broker(settings: Settings, recorder: JobRecorder) -> tuple[AsyncBroker, ScheduleSource]:
    """The broker (with the recorder and taskiq's retry middleware) and where retries wait."""
    broker: AsyncBroker
    retries: ScheduleSource
    if is_scale_out(settings):
        assert settings.redis_url is not None
        queue = queue_name(settings)
        broker = RedisStreamBroker(
            settings.redis_url,
            queue_name=queue,
            consumer_group_name=CONSUMER_GROUP,
            maxlen=STREAM_LIMIT,
        )
        # JSON, not taskiq-redis's default pickle: nothing read from Redis can run code here.
        retries = RedisRetries(
            settings.redis_url, prefix=f"{queue}:retries", serializer=JSONSerializer()
        )
    else:
        broker = LocalBroker()
        retries = WaitingRetries()
    retry = SmartRetryMiddleware(
        default_retry_count=1,
        use_delay_exponent=True,  # the delay grows with each attempt: delay × attempt
        max_delay_exponent=MAX_RETRY_DELAY_S,
        schedule_source=retries,
    )
    broker.add_middlewares(recorder, retry)  # recorder first: see JobRecorder
    return broker, retries
