"""Every domain's jobs: what each process registers with its job engine (API and worker alike).

A new area adds its `jobs.py`'s JOBS here.
"""

from papertrade.copytrading import jobs as copy_jobs
from papertrade.engine import jobs as engine_jobs
from papertrade.jobs.declare import Job
from papertrade.recharge import jobs as recharge_jobs
from papertrade.subscriptions import jobs as subscription_jobs

JOBS: tuple[Job[...], ...] = (*engine_jobs.JOBS,)
JOBS += recharge_jobs.JOBS
JOBS += copy_jobs.JOBS
JOBS += subscription_jobs.JOBS
