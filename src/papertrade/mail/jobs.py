"""Mail's scheduled job: the daily digests (mail/digest.py)."""

from papertrade.jobs.declare import scheduled
from papertrade.jobs.run import JobRun
from papertrade.mail import digest


async def send_digests(run: JobRun) -> dict[str, int]:
    async with run.ctx.transaction() as uow:
        return await digest.send_due(uow, run.ctx.settings.public_base_url)


# Every MAIL_DIGEST_EVERY_S (15 minutes): each user's digest goes within that of its day being up.
DIGEST = scheduled("mail.digest", send_digests, every=lambda settings: settings.mail_digest_every_s)
JOBS = (DIGEST,)
