"""The attestation jobs. `chain.attest`: seal each finished UTC day (chain what is left, Merkle
root, signature, signing queue), then submit queued roots to the OpenTimestamps calendars. It
runs every `attestation_every_s` (10 min by default) on the engine leader; a day is sealed once,
by the first run after it ends, and a calendar that failed is tried again by the next runs.
`chain.upgrade` (hourly): pending calendar proofs upgraded to Bitcoin-attested ones.
`chain.tron`: the optional TRON memo anchor (docs/attestation.md)."""

from papertrade.chain import tron
from papertrade.chain.attest import anchor_queued, seal_finished_days
from papertrade.chain.signing import attestation_key
from papertrade.chain.upgrade import upgrade_pending
from papertrade.config import Settings
from papertrade.jobs.declare import scheduled
from papertrade.jobs.run import JobRun


async def attest(run: JobRun) -> dict[str, int]:
    settings = run.ctx.settings
    key = attestation_key(settings)
    async with run.ctx.transaction() as uow:
        days = await seal_finished_days(uow.session, key, anchor_names(settings), uow.now())
    anchored = await anchor_queued(run.ctx)
    return {"sealed": len(days), **anchored}


def anchor_names(settings: Settings) -> list[str]:
    """Where each sealed root goes: every calendar, and the TRON node when that is on."""
    cfg = tron.config(settings)
    return [*settings.ots_calendars, *([cfg.name] if cfg else [])]


async def upgrade(run: JobRun) -> dict[str, int]:
    return await upgrade_pending(run.ctx)


async def tron_anchor(run: JobRun) -> dict[str, int]:
    return await tron.run(run.ctx)


ATTEST = scheduled("chain.attest", attest, every=lambda settings: settings.attestation_every_s)
UPGRADE = scheduled("chain.upgrade", upgrade, every=lambda settings: settings.ots_upgrade_every_s)
TRON = scheduled("chain.tron", tron_anchor, every=lambda settings: settings.tron_anchor_every_s)
JOBS = (ATTEST, UPGRADE, TRON)
