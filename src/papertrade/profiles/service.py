"""Profile, password change and account deletion (docs/profile.md)."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.auth.events import CredentialsRevoked
from papertrade.errors import NotFound, Unauthorized
from papertrade.kit.security import hash_password_in_thread, verify_password_in_thread
from papertrade.models import ApiKey, Portfolio, Profile, Strategy, User, UserSession
from papertrade.orders import service as orders
from papertrade.orders.pricing import Venue
from papertrade.portfolios import service as portfolios
from papertrade.profiles import leaving
from papertrade.profiles.names import public_name as public_name
from papertrade.uow import AsyncWork

DELETED_DOMAIN = "deleted.invalid"  # RFC 2606: can never be a real address


def not_found() -> NotFound:
    return NotFound("User not found.", code="user_not_found")


def is_deleted(user: User) -> bool:
    return user.email.endswith("@" + DELETED_DOMAIN)


def initials(name: str) -> str:
    words = [w for w in name.replace("_", " ").replace(".", " ").split() if w[:1].isalnum()]
    letters = "".join(w[0] for w in words[:2]) or name[:1] or "?"
    return letters.upper()


async def profile_of(session: AsyncSession, user_id: int) -> Profile:
    """The user's profile row, or the defaults (not stored until changed)."""
    found = await session.get(Profile, user_id)
    return found if found is not None else _blank(user_id)


def _blank(user_id: int) -> Profile:
    return Profile(user_id=user_id, bio="", time_zone="UTC", locale="en", avatar=None)


async def _editable(uow: AsyncWork, user_id: int) -> Profile:
    found = await uow.session.get(Profile, user_id, with_for_update=True)
    if found is None:
        found = _blank(user_id)
        uow.session.add(found)
    return found


async def update_profile(uow: AsyncWork, user: User, changes: dict[str, Any]) -> Profile:
    if "display_name" in changes:
        user.display_name = changes.pop("display_name")
    found = await _editable(uow, user.id)
    for field, value in changes.items():
        setattr(found, field, value)
    return found


async def set_avatar(uow: AsyncWork, user_id: int, png: bytes | None) -> None:
    (await _editable(uow, user_id)).avatar = png


async def public_strategies(session: AsyncSession, user_id: int) -> Sequence[Strategy]:
    rows = await session.scalars(
        select(Strategy)
        .where(
            Strategy.user_id == user_id,
            Strategy.visibility == "public",
            Strategy.deleted_at.is_(None),
        )
        .order_by(Strategy.id)
    )
    return rows.all()


async def public_portfolios(session: AsyncSession, user_id: int) -> Sequence[Portfolio]:
    rows = await session.scalars(
        select(Portfolio)
        .where(
            Portfolio.user_id == user_id,
            Portfolio.visibility == "public",
            Portfolio.deleted_at.is_(None),
        )
        .order_by(Portfolio.id)
    )
    return rows.all()


async def change_password(
    uow: AsyncWork, user: User, current: str, new: str, keep_session_id: int
) -> int:
    """Set a new password (the current one is required); every other session of the user is
    signed out. Returns how many were."""
    if not await verify_password_in_thread(user.password_hash, current):
        raise Unauthorized("The current password is incorrect.", code="invalid_credentials")
    user.password_hash = await hash_password_in_thread(new)
    revoked = await uow.session.execute(
        update(UserSession)
        .where(
            UserSession.user_id == user.id,
            UserSession.id != keep_session_id,
            UserSession.revoked_at.is_(None),
        )
        .values(revoked_at=uow.now())
    )
    uow.emit(CredentialsRevoked())
    return int(revoked.rowcount or 0)  # type: ignore[attr-defined]


async def delete_account(uow: AsyncWork, venue: Venue, user: User, password: str) -> None:
    """Delete the account (docs/profile.md): its copy relations (both sides) and subscriptions
    (both sides) end, its comments are removed and its strategies deleted (profiles/leaving.py);
    every portfolio's open orders are cancelled and the portfolio is deleted (public ones leave
    the square), every session, API key, key pair and webhook token stops working, the profile
    is erased, and the account is anonymised so the address can sign up again. Ledgers, fills
    and the wallet's history stay as records."""
    if not await verify_password_in_thread(user.password_hash, password):
        raise Unauthorized("The password is incorrect.", code="invalid_credentials")
    await leaving.leave(uow, venue, user.id)
    owned = await uow.session.scalars(
        select(Portfolio)
        .where(Portfolio.user_id == user.id, Portfolio.deleted_at.is_(None))
        .with_for_update()
    )
    for portfolio in list(owned):
        await orders.cancel_all(uow, portfolio.id)
        await portfolios.soft_delete(uow, portfolio)
    now = uow.now()
    await uow.session.execute(
        update(UserSession)
        .where(UserSession.user_id == user.id, UserSession.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    await uow.session.execute(
        update(ApiKey)
        .where(ApiKey.user_id == user.id, ApiKey.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    found = await uow.session.get(Profile, user.id)
    if found is not None:
        await uow.session.delete(found)
    user.email = f"user{user.id}@{DELETED_DOMAIN}"
    user.display_name = "deleted user"
    user.password_hash = "!"  # matches no password
    uow.emit(CredentialsRevoked())
