"""The attestation jobs. `chain.attest`: take the root of the last finished period of
`attestation_root_every_s` (chain what is left, Merkle root, signed PTA2 statement), then submit
queued roots to the OpenTimestamps calendars (one root a day goes to them: it names the one
before it, so it anchors them all). It runs every `attestation_every_s` or every root period,
whichever is shorter, on the engine leader; a calendar that failed is tried again later.
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
    # Chain tables only, as the chain consumer: the SQLite order writer's memory stays good.
    async with run.ctx.transaction(keeps_writer_memory=True) as uow:
        days = await seal_finished_days(
            uow.session, key, anchor_names(settings), uow.now(), settings.attestation_root_every_s
        )
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


def attest_every(settings: Settings) -> int:
    """Often enough for a root every `attestation_root_every_s` (0: the job is off)."""
    if not settings.attestation_every_s:
        return 0
    return min(settings.attestation_every_s, settings.attestation_root_every_s)


ATTEST = scheduled("chain.attest", attest, every=attest_every)
UPGRADE = scheduled("chain.upgrade", upgrade, every=lambda settings: settings.ots_upgrade_every_s)
TRON = scheduled("chain.tron", tron_anchor, every=lambda settings: settings.tron_anchor_every_s)
JOBS = (ATTEST, UPGRADE, TRON)
