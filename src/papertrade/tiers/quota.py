"""The daily AI quota (B9): prompts per UTC day by tier, counted in the database so that every
process shares one count, reset at 00:00 UTC. Any AI feature calls `consume` before it answers."""

from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.errors import RateLimited
from papertrade.kit.ratelimit import RateLimiter
from papertrade.models import AiUsage
from papertrade.tiers.limits import tier_of
from papertrade.uow import AsyncWork

DAY_MS = 86_400_000
BURST_PER_MIN = 10  # B9: on top of the daily quota, at most this many a minute


class AiQuotaExceeded(RateLimited):
    code = "ai_quota_exceeded"

    def __init__(self, limit: int, resets_at: int, now: int):
        super().__init__(
            f"You have used all {limit} AI messages of today; the quota resets at 00:00 UTC. "
            "Upgrade your tier for more (/v1/launch/tiers). Everything else keeps working.",
            retry_after=max(1, (resets_at - now + 999) // 1000),
        )
        self.extra = {"resets_at": resets_at, "limit": limit}


async def charge_burst(limiter: RateLimiter, user_id: int) -> None:
    """The per-minute burst limit (shared across processes when the limiter is Redis's); call
    it after `consume`, in the same unit of work, so that a refusal here rolls the count back
    and a request at the day's quota is told ai_quota_exceeded, not rate_limited."""
    usage = await limiter.hit(f"ai:burst:{user_id}", BURST_PER_MIN, 60)
    if not usage.allowed:
        raise RateLimited(
            f"At most {BURST_PER_MIN} AI messages a minute; retry in {usage.retry_after} s.",
            retry_after=usage.retry_after,
        )


@dataclass(frozen=True, slots=True)
class Quota:
    limit: int
    used: int
    resets_at: int

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.used)


def day_of(now: int) -> int:
    return now // DAY_MS


async def status(session: AsyncSession, user_id: int, now: int) -> Quota:
    tier = await tier_of(session, user_id, now)
    used = await session.scalar(
        select(AiUsage.used).where(AiUsage.user_id == user_id, AiUsage.day == day_of(now))
    )
    return Quota(tier.ai_messages_per_day, used or 0, (day_of(now) + 1) * DAY_MS)


async def consume(uow: AsyncWork, user_id: int) -> Quota:
    """Count one prompt, or raise AiQuotaExceeded (429) when today's are used up. The count
    goes up in one conditional UPDATE, so two processes racing never exceed the limit."""
    now = uow.now()
    day = day_of(now)
    tier = await tier_of(uow.session, user_id, now)
    resets_at = (day + 1) * DAY_MS
    raised = await uow.session.execute(
        update(AiUsage)
        .where(
            AiUsage.user_id == user_id, AiUsage.day == day, AiUsage.used < tier.ai_messages_per_day
        )
        .values(used=AiUsage.used + 1)
        .returning(AiUsage.used)
    )
    used = raised.scalar_one_or_none()
    if used is None:
        exists = await uow.session.scalar(
            select(AiUsage.used).where(AiUsage.user_id == user_id, AiUsage.day == day)
        )
        if exists is not None or tier.ai_messages_per_day < 1:
            raise AiQuotaExceeded(tier.ai_messages_per_day, resets_at, now)
        try:
            async with uow.session.begin_nested():
                uow.session.add(AiUsage(user_id=user_id, day=day, used=1))
        except IntegrityError:  # another process counted the first one: count again
            return await consume(uow, user_id)
        used = 1
    return Quota(tier.ai_messages_per_day, used, resets_at)
