"""Every domain's jobs: what each process registers with its job engine (API and worker alike).

A new area adds its `jobs.py`'s JOBS here.
"""

from papertrade.chain import jobs as chain_jobs
from papertrade.engine import jobs as engine_jobs
from papertrade.jobs.declare import Job
from papertrade.live import jobs as live_jobs

JOBS: tuple[Job[...], ...] = (*engine_jobs.JOBS, *chain_jobs.JOBS, *live_jobs.JOBS)
