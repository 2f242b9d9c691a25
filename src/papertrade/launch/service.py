"""Who may sign up: the registration mode, invitation codes with an atomic use count, and a
waitlist with double opt-in and referrals (B9)."""

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from papertrade.errors import Forbidden, NotFound
from papertrade.kit.security import new_token, token_hash
from papertrade.launch import codes
from papertrade.launch.events import WaitlistInvited, WaitlistJoined
from papertrade.models import InviteCode, InviteUse, WaitlistEntry
from papertrade.uow import AsyncWork

DAY_MS = 86_400_000
CODE_DAYS = 14  # a new code is good for two weeks
CODES_PER_NEW_USER = 3
REFERRAL_BONUS = 10  # places a waitlister moves up per verified referral


class InviteRequired(Forbidden):
    code = "invite_required"


async def create_code(
    uow: AsyncWork,
    *,
    owner_id: int | None,
    max_uses: int | None = 1,
    days: int | None = CODE_DAYS,
    description: str = "",
) -> InviteCode:
    """A new code (a fresh one is drawn in the unlikely case the first is taken)."""
    now = uow.now()
    while True:
        row = InviteCode(
            code=codes.new_code(),
            description=description[:200],
            max_uses=max_uses,
            use_count=0,
            enabled=True,
            expires_at=now + days * DAY_MS if days is not None else None,
            owner_id=owner_id,
            created_at=now,
        )
        try:
            async with uow.session.begin_nested():
                uow.session.add(row)
        except IntegrityError:
            continue
        return row


async def use_code(uow: AsyncWork, typed: str, user_id: int) -> InviteCode | None:
    """Count one use of a live code for `user_id`, atomically (two sign-ups racing for the last
    use: one gets it); None when the code is unknown, disabled, expired or used up."""
    code = codes.normalise(typed)
    if code is None:
        return None
    now = uow.now()
    counted = await uow.session.execute(
        update(InviteCode)
        .where(
            InviteCode.code == code,
            InviteCode.enabled.is_(True),
            or_(InviteCode.expires_at.is_(None), InviteCode.expires_at > now),
            or_(InviteCode.max_uses.is_(None), InviteCode.use_count < InviteCode.max_uses),
        )
        .values(use_count=InviteCode.use_count + 1)
        .returning(InviteCode.id)
    )
    code_id = counted.scalar_one_or_none()
    if code_id is None:
        return None
    row = await uow.session.get(InviteCode, code_id)
    assert row is not None
    uow.session.add(
        InviteUse(user_id=user_id, code_id=code_id, invited_by=row.owner_id, used_at=now)
    )
    return row


async def admit(uow: AsyncWork, mode: str, typed_code: str | None, user_id: int) -> None:
    """Apply the registration mode to a new user, then give them their own codes. Open: a code
    is optional (a valid one is recorded). invite_only and waitlist: a live code is required;
    without one the whole sign-up is undone."""
    used = await use_code(uow, typed_code, user_id) if typed_code else None
    if used is None and mode != "open":
        raise InviteRequired(
            "Sign-up needs a valid invitation code right now"
            + (" (join the waitlist to get one)." if mode == "waitlist" else ".")
        )
    for _ in range(CODES_PER_NEW_USER):
        await create_code(uow, owner_id=user_id)


async def my_codes(session: AsyncSession, user_id: int) -> Sequence[InviteCode]:
    rows = await session.scalars(
        select(InviteCode).where(InviteCode.owner_id == user_id).order_by(InviteCode.id)
    )
    return rows.all()


async def is_live(session: AsyncSession, typed: str, now: int) -> bool:
    """Whether a code would let someone sign up now (for the sign-up page's ?code= prefill)."""
    code = codes.normalise(typed)
    row = await session.scalar(select(InviteCode).where(InviteCode.code == code)) if code else None
    return bool(
        row is not None
        and row.enabled
        and (row.expires_at is None or row.expires_at > now)
        and (row.max_uses is None or row.use_count < row.max_uses)
    )


# -- the waitlist -------------------------------------------------------------------------------


async def join(uow: AsyncWork, email: str, referral_code: str | None) -> None:
    """Join the waitlist (or ask again for the confirmation e-mail). The answer is the same
    whether or not the address was on it: nobody learns who is."""
    token = new_token("wl_")
    entry = await uow.session.scalar(select(WaitlistEntry).where(WaitlistEntry.email == email))
    if entry is not None:
        if entry.verified_at is None:
            entry.verify_token_hash = token_hash(token)
            uow.emit(WaitlistJoined(email=email, verify_token=token))
        return
    referrer = None
    if referral_code and (code := codes.normalise(referral_code)):
        referrer = await uow.session.scalar(
            select(WaitlistEntry.id).where(WaitlistEntry.referral_code == code)
        )
    while True:
        entry = WaitlistEntry(
            email=email,
            referral_code=codes.new_code(),
            referred_by=referrer,
            verify_token_hash=token_hash(token),
            created_at=uow.now(),
        )
        try:
            async with uow.session.begin_nested():
                uow.session.add(entry)
        except IntegrityError:  # the same address at the same instant, or a taken code
            if await uow.session.scalar(
                select(WaitlistEntry.id).where(WaitlistEntry.email == email)
            ):
                return
            continue
        break
    uow.emit(WaitlistJoined(email=email, verify_token=token))


def _not_found() -> NotFound:
    return NotFound("No such waitlist entry, or the link has expired.", code="waitlist_not_found")


async def verify(uow: AsyncWork, token: str) -> WaitlistEntry:
    entry = await uow.session.scalar(
        select(WaitlistEntry).where(WaitlistEntry.verify_token_hash == token_hash(token))
    )
    if entry is None:
        raise _not_found()
    if entry.verified_at is None:
        entry.verified_at = uow.now()
    return entry


@dataclass(frozen=True, slots=True)
class Standing:
    position: int | None  # 1 = next in line; None until verified, or once invited
    referrals: int
    verified: bool
    invited: bool


async def _line(session: AsyncSession) -> list[int]:
    """Verified, not yet invited entries in the order they will be invited: by signup order,
    each verified referral moving its referrer REFERRAL_BONUS places up."""
    referrals = (
        select(WaitlistEntry.referred_by, func.count().label("n"))
        .where(WaitlistEntry.verified_at.is_not(None), WaitlistEntry.referred_by.is_not(None))
        .group_by(WaitlistEntry.referred_by)
        .subquery()
    )
    rows = await session.execute(
        select(WaitlistEntry.id, func.coalesce(referrals.c.n, 0))
        .outerjoin(referrals, referrals.c.referred_by == WaitlistEntry.id)
        .where(WaitlistEntry.verified_at.is_not(None), WaitlistEntry.invited_at.is_(None))
    )
    ranked = sorted(rows.all(), key=lambda row: (row[0] - REFERRAL_BONUS * row[1], row[0]))
    return [row[0] for row in ranked]


async def standing(session: AsyncSession, referral_code: str) -> Standing:
    code = codes.normalise(referral_code)
    entry = (
        await session.scalar(select(WaitlistEntry).where(WaitlistEntry.referral_code == code))
        if code
        else None
    )
    if entry is None:
        raise _not_found()
    referrals = await session.scalar(
        select(func.count(WaitlistEntry.id)).where(
            WaitlistEntry.referred_by == entry.id, WaitlistEntry.verified_at.is_not(None)
        )
    )
    line = await _line(session)
    position = line.index(entry.id) + 1 if entry.id in line else None
    return Standing(
        position, referrals or 0, entry.verified_at is not None, entry.invited_at is not None
    )


async def invite_top(uow: AsyncWork, count: int) -> list[tuple[str, str]]:
    """Give the first `count` in line a single-use code each; returns (email, code) pairs."""
    invited = []
    for entry_id in (await _line(uow.session))[:count]:
        entry = await uow.session.get(WaitlistEntry, entry_id, with_for_update=True)
        if entry is None or entry.invited_at is not None:
            continue
        code = await create_code(uow, owner_id=None, description=f"waitlist {entry.email}")
        entry.invited_at = uow.now()
        entry.invite_code_id = code.id
        uow.emit(WaitlistInvited(email=entry.email, code=code.code))
        invited.append((entry.email, code.code))
    return invited


async def export(session: AsyncSession) -> list[tuple[object, ...]]:
    """Every entry: (position or None, email, referral code, verified referrals, verified_at,
    invited_at, created_at), those in line first and in line order."""
    line = await _line(session)
    place = {entry_id: index + 1 for index, entry_id in enumerate(line)}
    referred = await session.execute(
        select(WaitlistEntry.referred_by, func.count())
        .where(WaitlistEntry.verified_at.is_not(None), WaitlistEntry.referred_by.is_not(None))
        .group_by(WaitlistEntry.referred_by)
    )
    counts: dict[int | None, int] = {row[0]: row[1] for row in referred.all()}
    entries = (await session.scalars(select(WaitlistEntry).order_by(WaitlistEntry.id))).all()
    rows = [
        (
            place.get(e.id),
            e.email,
            e.referral_code,
            counts.get(e.id, 0),
            e.verified_at,
            e.invited_at,
            e.created_at,
        )
        for e in entries
    ]
    return sorted(rows, key=lambda row: (row[0] is None, row[0] or 0))
