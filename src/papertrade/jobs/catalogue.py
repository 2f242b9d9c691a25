"""Every domain's jobs: what each process registers with its job engine (API and worker alike).

A new area adds its `jobs.py`'s JOBS here.
"""

from papertrade.chain import jobs as chain_jobs
from papertrade.copytrading import jobs as copy_jobs
from papertrade.engine import jobs as engine_jobs
from papertrade.inbound import jobs as inbound_jobs
from papertrade.jobs import housekeeping
from papertrade.jobs.declare import Job
from papertrade.live import jobs as live_jobs
from papertrade.mail import jobs as mail_jobs
from papertrade.notifications import jobs as notification_jobs
from papertrade.recharge import jobs as recharge_jobs
from papertrade.strategies import jobs as strategies_jobs
from papertrade.subscriptions import jobs as subscription_jobs
from papertrade.tg import jobs as telegram_jobs

JOBS: tuple[Job[...], ...] = (
    *engine_jobs.JOBS,
    *housekeeping.JOBS,
    *strategies_jobs.JOBS,
    *notification_jobs.JOBS,
    *telegram_jobs.JOBS,
    *inbound_jobs.JOBS,
    *recharge_jobs.JOBS,
    *chain_jobs.JOBS,
    *live_jobs.JOBS,
    *copy_jobs.JOBS,
    *subscription_jobs.JOBS,
    *mail_jobs.JOBS,
)
