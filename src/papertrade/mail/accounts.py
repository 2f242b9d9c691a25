"""Email verification and password reset: single-use tokens mailed to the account's address.

Only the token's SHA-256 is kept. A verification link works for 24 hours, a reset link for 30
minutes; each works once, and only for the address it was sent to (changing the address makes
an old link useless). A reset signs out every session of the account.
"""

from sqlalchemy import select, update

from papertrade.errors import BadRequest
from papertrade.kit.security import hash_password, new_token, token_hash
from papertrade.mail import service
from papertrade.models import AccountToken, EmailState, EmailSuppression, User, UserSession
from papertrade.uow import AsyncWork

VERIFY_TTL_MS = 24 * 3_600_000
RESET_TTL_MS = 30 * 60_000
RESEND_GAP_MS = 60_000  # one mail of a kind per account per minute: no mail bombing


class InvalidToken(BadRequest):
    code = "invalid_token"


async def _issue(uow: AsyncWork, user: User, purpose: str, ttl_ms: int) -> str | None:
    """A new token, or None when one of this purpose went out less than a minute ago."""
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
            email=user.email,
            created_at=now,
            expires_at=now + ttl_ms,
        )
    )
    return token


async def request_verification(uow: AsyncWork, user: User, base_url: str) -> bool:
    """Mail a verification link; False when one went out less than a minute ago."""
    token = await _issue(uow, user, "verify_email", VERIFY_TTL_MS)
    if token is None:
        return False
    link = f"{base_url.rstrip('/')}/v1/auth/email/verify?token={token}"
    body = (
        f"Confirm that {user.email} is your address on Papertrade by opening this link within "
        f"24 hours:\n\n{link}\n\nIf you did not ask for this, ignore this mail."
    )
    service.queue(
        uow, user.email, "Confirm your email address", body, user_id=user.id, transactional=True
    )
    return True


async def request_reset(uow: AsyncWork, email: str) -> None:
    """Mail a reset token if the address has an account; says nothing either way."""
    user = await uow.session.scalar(select(User).where(User.email == email))
    if user is None:
        return
    token = await _issue(uow, user, "reset_password", RESET_TTL_MS)
    if token is None:
        return
    body = (
        "Someone (we hope you) asked to reset your Papertrade password. Within 30 minutes, "
        "send this token with your new password to POST /v1/auth/password/reset:\n\n"
        f"{token}\n\nIf it was not you, ignore this mail: your password stays as it is."
    )
    service.queue(uow, user.email, "Reset your password", body, user_id=user.id, transactional=True)


async def _use(uow: AsyncWork, token: str, purpose: str) -> User:
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
        or row.purpose != purpose
        or row.used_at is not None
        or row.expires_at <= uow.now()
        or row.email != user.email
    ):
        raise refused
    row.used_at = uow.now()
    return user


async def verify(uow: AsyncWork, token: str) -> User:
    user = await _use(uow, token, "verify_email")
    state = await uow.session.get(EmailState, user.id)
    if state is None:
        uow.session.add(EmailState(user_id=user.id, email=user.email, verified_at=uow.now()))
    else:
        state.email, state.verified_at = user.email, uow.now()
    return user


async def reset_password(uow: AsyncWork, token: str, password: str) -> User:
    user = await _use(uow, token, "reset_password")
    user.password_hash = hash_password(password)
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
    }
