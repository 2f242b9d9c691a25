"""The attestation job: seal each finished UTC day (chain what is left, Merkle root, signature,
signing queue), then submit queued roots to the OpenTimestamps calendars. It runs every
`attestation_every_s` (10 min by default) on the engine leader; a day is sealed once, by the
first run after it ends, and a calendar that failed is tried again by the next runs."""

from papertrade.chain.attest import anchor_queued, seal_finished_days
from papertrade.chain.signing import attestation_key
from papertrade.jobs.declare import scheduled
from papertrade.jobs.run import JobRun


async def attest(run: JobRun) -> dict[str, int]:
    settings = run.ctx.settings
    key = attestation_key(settings)
    async with run.ctx.transaction() as uow:
        days = await seal_finished_days(uow.session, key, list(settings.ots_calendars), uow.now())
    anchored = await anchor_queued(run.ctx)
    return {"sealed": len(days), **anchored}


ATTEST = scheduled("chain.attest", attest, every=lambda settings: settings.attestation_every_s)
JOBS = (ATTEST,)
