"""Email verification, change of address and password reset: single-use tokens mailed out.

Only the token's SHA-256 is kept. A verification link works for 24 hours, a reset link for 30
minutes; each works once, and only for the address it was sent to (changing the address makes
an old link useless). A reset signs out every session of the account.

A change of address is a verification link mailed to the NEW address: the account moves to it
only when the link is opened, so nobody can take over an address they cannot read. Asking again
voids the earlier link, and the old address is told once the change is made.
"""

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from papertrade.errors import BadRequest, Conflict, Unauthorized
from papertrade.kit.security import (
    hash_password_in_thread,
    new_token,
    token_hash,
    verify_password_in_thread,
)
from papertrade.mail import service
from papertrade.models import AccountToken, EmailState, EmailSuppression, User, UserSession
from papertrade.uow import AsyncWork

VERIFY_TTL_MS = 24 * 3_600_000
RESET_TTL_MS = 30 * 60_000
RESEND_GAP_MS = 60_000  # one mail of a kind per account per minute: no mail bombing
VERIFY, CHANGE, RESET = "verify_email", "change_email", "reset_password"


class InvalidToken(BadRequest):
    code = "invalid_token"


async def _issue(
    uow: AsyncWork, user: User, purpose: str, ttl_ms: int, email: str | None = None
) -> str | None:
    """A new token for `email` (default: the account's address), or None when one of this
    purpose went out less than a minute ago."""
    now = uow.now()
    recent = await uow.session.scalar(
        select(AccountToken.token_hash).where(
            AccountToken.user_id == user.id,
            AccountToken.purpose == purpose,
            AccountToken.created_at > now - RESEND_GAP_MS,
        )
    )
    if recent is not None:
        return None
    token = new_token(nbytes=32)
    uow.session.add(
        AccountToken(
            token_hash=token_hash(token),
            user_id=user.id,
            purpose=purpose,
            email=email or user.email,
            created_at=now,
            expires_at=now + ttl_ms,
        )
    )
    return token


async def request_verification(uow: AsyncWork, user: User, base_url: str) -> bool:
    """Mail a verification link; False when one went out less than a minute ago."""
    token = await _issue(uow, user, VERIFY, VERIFY_TTL_MS)
    if token is None:
        return False
    link = f"{base_url.rstrip('/')}/email/verify?token={token}"
    body = (
        f"Confirm that {user.email} is your address on Papertrade by opening this link within "
        f"24 hours:\n\n{link}\n\nIf you did not ask for this, ignore this mail."
    )
    service.queue(
        uow, user.email, "Confirm your email address", body, user_id=user.id, transactional=True
    )
    return True


async def request_reset(uow: AsyncWork, email: str, base_url: str) -> None:
    """Mail a reset token if the address has an account; says nothing either way."""
    user = await uow.session.scalar(select(User).where(User.email == email))
    if user is None:
        return
    token = await _issue(uow, user, RESET, RESET_TTL_MS)
    if token is None:
        return
    link = f"{base_url.rstrip('/')}/password/reset?token={token}"
    body = (
        "Someone (we hope you) asked to reset your Papertrade password. Within 30 minutes, "
        f"open this link and choose a new one:\n\n{link}\n\n"
        "Or send this token with your new password to POST /v1/auth/password/reset:\n\n"
        f"{token}\n\nIf it was not you, ignore this mail: your password stays as it is."
    )
    service.queue(uow, user.email, "Reset your password", body, user_id=user.id, transactional=True)


async def _use(uow: AsyncWork, token: str, *purposes: str) -> tuple[AccountToken, User]:
    refused = InvalidToken(
        "This link or token is invalid, used or expired; ask for a new one.", code="invalid_token"
    )
    if not token or len(token) > 200:
        raise refused
    row = await uow.session.get(AccountToken, token_hash(token), with_for_update=True)
    user = await uow.session.get(User, row.user_id) if row is not None else None
    if (
        row is None
        or user is None
        or row.purpose not in purposes
        or row.used_at is not None
        or row.expires_at <= uow.now()
        or (row.purpose != CHANGE and row.email != user.email)
    ):
        raise refused
    row.used_at = uow.now()
    return row, user


async def verify(uow: AsyncWork, token: str) -> User:
    """Confirm the address the link was sent to; a change-of-address link moves the account
    to it first."""
    row, user = await _use(uow, token, VERIFY, CHANGE)
    if row.purpose == CHANGE:
        await _move(uow, user, row.email)
    state = await uow.session.get(EmailState, user.id)
    if state is None:
        uow.session.add(EmailState(user_id=user.id, email=user.email, verified_at=uow.now()))
    else:
        state.email, state.verified_at = user.email, uow.now()
    return user


async def reset_password(uow: AsyncWork, token: str, password: str) -> User:
    _, user = await _use(uow, token, RESET)
    user.password_hash = await hash_password_in_thread(password)
    await uow.session.execute(
        update(UserSession)
        .where(UserSession.user_id == user.id, UserSession.revoked_at.is_(None))
        .values(revoked_at=uow.now())
    )
    return user


async def address_state(uow: AsyncWork, user: User) -> dict[str, object]:
    state = await uow.session.get(EmailState, user.id)
    suppression = await uow.session.get(EmailSuppression, user.email)
    return {
        "email": user.email,
        "verified": state is not None and state.email == user.email,
        "suppressed": suppression is not None,
        "suppressed_reason": suppression.reason if suppression is not None else None,
        "frequency": await service.frequency_of(uow.session, user.id),
    }


def _taken() -> Conflict:
    return Conflict("An account with this email already exists.", code="email_taken")


async def _check_free(uow: AsyncWork, user: User, email: str) -> None:
    owner = await uow.session.scalar(select(User.id).where(User.email == email))
    if owner is not None and owner != user.id:
        raise _taken()


async def request_change(
    uow: AsyncWork, user: User, new_email: str, password: str, base_url: str
) -> bool:
    """Mail a link that moves the account to `new_email` (already normalised); False when one
    went out less than a minute ago. Voids the links of earlier requests."""
    if not await verify_password_in_thread(user.password_hash, password):
        raise Unauthorized("The current password is incorrect.", code="invalid_credentials")
    if new_email == user.email:
        raise BadRequest("This is already the account's address.", code="email_unchanged")
    await _check_free(uow, user, new_email)
    token = await _issue(uow, user, CHANGE, VERIFY_TTL_MS, email=new_email)
    if token is None:
        return False
    await uow.session.execute(
        update(AccountToken)
        .where(
            AccountToken.user_id == user.id,
            AccountToken.purpose == CHANGE,
            AccountToken.used_at.is_(None),
            AccountToken.token_hash != token_hash(token),
        )
        .values(used_at=uow.now())
    )
    link = f"{base_url.rstrip('/')}/email/verify?token={token}"
    body = (
        f"Someone (we hope you) asked to use {new_email} for their Papertrade account. Open "
        f"this link within 24 hours to make the change:\n\n{link}\n\n"
        "Until then the account keeps its current address. If you did not ask for this, "
        "ignore this mail."
    )
    service.queue(
        uow, new_email, "Confirm your new email address", body, user_id=user.id, transactional=True
    )
    return True


async def _move(uow: AsyncWork, user: User, new_email: str) -> None:
    """Give the account its new address (if still free), and tell the old one."""
    await _check_free(uow, user, new_email)
    old_email = user.email
    user.email = new_email
    if user.display_name == old_email[:80]:  # the sign-up default: keep it the address
        user.display_name = new_email[:80]
    try:
        async with uow.session.begin_nested():
            await uow.session.flush()
    except IntegrityError as exc:  # taken by a sign-up or another change at the same instant
        raise _taken() from exc
    body = (
        f"The email address of your Papertrade account was changed from {old_email} to "
        f"{new_email}. Mail for the account now goes there, and this address can no longer "
        "sign in.\n\nIf you did not make this change, someone else knows your password: "
        "contact the operator of this Papertrade service."
    )
    service.queue(
        uow,
        old_email,
        "Your Papertrade email address was changed",
        body,
        user_id=user.id,
        transactional=True,
    )
