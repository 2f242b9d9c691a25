"""Accounts and server-side sessions."""

import secrets

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.errors import Conflict, NotFound, Unauthorized
from papertrade.kit.security import (
    hash_password_in_thread,
    new_token,
    token_hash,
    verify_password_in_thread,
)
from papertrade.kit.time import now_ms
from papertrade.models import User, UserSession


def normalise_email(email: str) -> str:
    """The one form an address is stored and looked up in: email-validator's normalisation
    (Unicode NFC, the domain in lower case and IDNA-decoded), then the whole address in lower
    case. Mailbox names are case-sensitive in theory but not in practice, and people type their
    address with whatever capitals. Not an address: stripped and lower-cased, so it matches
    nothing (or a renamed duplicate, see migration 0005)."""
    try:
        email = validate_email(email, check_deliverability=False).normalized
    except EmailNotValidError:
        email = email.strip()
    return email.lower()


async def create_user(session: AsyncSession, email: str, password: str) -> User:
    """Create an account; the email must be new, whatever its capitals."""
    email = normalise_email(email)
    if await session.scalar(select(User.id).where(User.email == email)) is not None:
        raise Conflict("An account with this email already exists.", code="email_taken")
    user = User(
        email=email, password_hash=await hash_password_in_thread(password), display_name=email[:80]
    )
    session.add(user)
    try:
        await session.flush()
    except IntegrityError as exc:
        raise Conflict("An account with this email already exists.", code="email_taken") from exc
    return user


async def authenticate(session: AsyncSession, email: str, password: str) -> User:
    """The user with these credentials; one message for every failure (no enumeration)."""
    user = await session.scalar(select(User).where(User.email == normalise_email(email)))
    if (
        not await verify_password_in_thread(user.password_hash if user else None, password)
        or user is None
    ):
        raise Unauthorized("Email or password is incorrect.", code="invalid_credentials")
    return user


async def open_session(
    session: AsyncSession, user: User, days: int, device: str | None = None
) -> tuple[str, str]:
    """Start a web session; returns (cookie token, csrf token). Only hashes are stored (of the
    token, and of the device it was opened from: users/devices.py)."""
    token = new_token("pts_")
    csrf = secrets.token_urlsafe(32)
    session.add(
        UserSession(
            token_hash=token_hash(token),
            user_id=user.id,
            csrf_token=csrf,
            expires_at=now_ms() + days * 86_400_000,
            device_hash=device,
        )
    )
    await session.flush()
    return token, csrf


async def revoke_session(session: AsyncSession, session_id: int) -> None:
    await session.execute(
        update(UserSession)
        .where(UserSession.id == session_id, UserSession.revoked_at.is_(None))
        .values(revoked_at=now_ms())
    )


async def get_user(session: AsyncSession, user_id: int) -> User:
    user = await session.get(User, user_id)
    if user is None:
        raise NotFound("User not found.")
    return user
