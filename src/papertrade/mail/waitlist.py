"""The waitlist's e-mails: the double opt-in link and the invitation code (docs/launch.md).

Launch emits `waitlist.joined` and `waitlist.invited` to the durable outbox; this consumer turns
each into a queued mail row in the unit of work that moves its cursor, so a crash neither loses
a mail nor queues one twice. Both are transactional: the person just asked for them, so they go
even to a suppressed address and carry no unsubscribe link (docs/email.md).
"""

from collections.abc import Sequence
from urllib.parse import urlencode

from papertrade.context import AppContext
from papertrade.launch.events import WaitlistInvited, WaitlistJoined
from papertrade.mail import service
from papertrade.outbox.dispatcher import Consumer
from papertrade.outbox.store import StoredEvent
from papertrade.uow import AsyncWork


def verification_mail(base_url: str, email: str, token: str) -> tuple[str, str]:
    # The web page confirms with a POST when opened (a mail scanner's GET confirms nothing).
    link = f"{base_url}/waitlist/verify?{urlencode({'token': token})}"
    body = (
        f"Someone (we hope you) put {email} on the Papertrade waitlist. Open this link to "
        f"confirm the address and take your place in line:\n\n{link}\n\n"
        "If it was not you, ignore this mail: an unconfirmed address holds no place and gets "
        "nothing more from us."
    )
    return "Confirm your place on the Papertrade waitlist", body


def invitation_mail(base_url: str, code: str) -> tuple[str, str]:
    link = f"{base_url}/signup?{urlencode({'code': code})}"
    body = (
        "Your turn has come: you are invited to Papertrade.\n\n"
        f"Your invitation code: {code}\n\n"
        f"Create your account with it here (the code is filled in for you):\n\n{link}\n\n"
        "The code works once and expires in 14 days."
    )
    return "Your Papertrade invitation", body


def waitlist_mail_consumer(ctx: AppContext) -> Consumer:
    """The consumer, bound to the deployment's public address (the links point there)."""

    async def handle(uow: AsyncWork, events: Sequence[StoredEvent]) -> None:
        base = ctx.settings.public_base_url.rstrip("/")
        for event in events:
            email = str(event.data["email"])
            if event.type == WaitlistJoined.type:
                subject, body = verification_mail(base, email, str(event.data["verify_token"]))
            else:
                subject, body = invitation_mail(base, str(event.data["code"]))
            service.queue(uow, email, subject, body, kind=event.type, transactional=True)

    return Consumer(
        "mail.waitlist",
        handle,
        types=frozenset({WaitlistJoined.type, WaitlistInvited.type}),
        # From the start: these events were emitted for this mail before anything sent it, and
        # their links still work (the outbox keeps a week of them).
        from_start=True,
        own_tables_only=True,  # it writes only email_messages
    )
