"""Mail's scheduled job: the daily digests and the held mail (mail/digest.py)."""

from papertrade.jobs.declare import scheduled
from papertrade.jobs.run import JobRun
from papertrade.mail import digest


async def send_digests(run: JobRun) -> dict[str, int]:
    base_url = run.ctx.settings.public_base_url
    async with run.ctx.transaction() as uow:
        result = await digest.send_due(uow, base_url)
    async with run.ctx.transaction() as uow:
        result["held_sent"] = await digest.send_held(uow, base_url)
    return result


# Every MAIL_DIGEST_EVERY_S (15 minutes): each user's digest goes within that of its day being up,
# and held mail within that of its hour.
DIGEST = scheduled("mail.digest", send_digests, every=lambda settings: settings.mail_digest_every_s)
JOBS = (DIGEST,)
