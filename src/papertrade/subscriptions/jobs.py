"""Subscription renewal as a scheduled job (docs/jobs.md): every `subscription_renew_poll_s`
seconds the leader renews, ends or marks past due each paid subscription whose period is over."""

from sqlalchemy import select

from papertrade.context import AppContext
from papertrade.jobs.declare import scheduled
from papertrade.jobs.run import JobRun
from papertrade.kit.time import now_ms
from papertrade.models import Subscription
from papertrade.subscriptions import service


async def renew_due(ctx: AppContext) -> dict[str, int]:
    async with ctx.db.reader() as session:
        due = (
            await session.scalars(
                select(Subscription.id).where(
                    Subscription.tier == service.PAID,
                    Subscription.status.in_((service.ACTIVE, service.PAST_DUE)),
                    Subscription.current_period_end <= now_ms(),
                )
            )
        ).all()
    counts = {"renewed": 0, "ended": 0, "past_due": 0, "skipped": 0}
    for subscription_id in due:
        async with ctx.transaction() as uow:  # one each: a failure stops no other
            counts[await service.renew(uow, subscription_id)] += 1
    return counts


async def renew_subscriptions(run: JobRun) -> dict[str, int]:
    return await renew_due(run.ctx)


RENEW = scheduled(
    "subscriptions.renew", renew_subscriptions, every=lambda s: s.subscription_renew_poll_s
)

JOBS = (RENEW,)
